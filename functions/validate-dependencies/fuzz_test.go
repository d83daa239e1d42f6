package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// FuzzValidateDependencies feeds arbitrary input to the function: it must never
// panic, must always answer with a ResourceList and exit code 0 or 1, and must
// give back every item of a readable input unchanged and in order.
func FuzzValidateDependencies(f *testing.F) {
	for _, c := range krmtest.Cases(f, "testdata") {
		f.Add(c.ResourceList(f))
	}
	f.Add([]byte(krmtest.AliasedItems))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 1\n- [a]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1\n  kind: Policy\n  metadata: x\n  spec: [1]\n"))
	f.Add([]byte("kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: ValidateDependencies, external: [{}]}\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		in, got, _, ok := krmtest.FuzzRun(t, validateDependencies, input)
		if !ok {
			return
		}
		if len(got.Items) != len(in.Items) {
			t.Fatalf("%d items in, %d out", len(in.Items), len(got.Items))
		}
		for i := range in.Items {
			if got.Items[i].String() != in.Items[i].String() {
				t.Fatalf("item %d changed:\n--- got\n%s\n--- want\n%s", i, got.Items[i].String(), in.Items[i].String())
			}
		}
	})
}
