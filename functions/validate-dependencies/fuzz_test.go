package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// FuzzValidateDependencies feeds arbitrary input to the function: it must never
// panic, must always answer with a ResourceList and exit code 0 or 1, and must
// give back every item of a readable input unchanged and in order.
func FuzzValidateDependencies(f *testing.F) {
	krmtest.AddSeeds(f, nil,
		"kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1\n  kind: Policy\n  metadata: x\n  spec: [1]\n",
		"kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: ValidateDependencies, external: [{}]}\n")
	f.Fuzz(func(t *testing.T, input []byte) {
		if in, got, _, ok := krmtest.FuzzRun(t, validateDependencies, input); ok {
			krmtest.CheckPassedThrough(t, in.Items, got.Items, nil)
		}
	})
}
