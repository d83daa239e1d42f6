package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// FuzzCheckPlacement feeds arbitrary input to the function: it must never
// panic, must always answer with a ResourceList and exit code 0 or 1, and must
// give back every item of a readable input in order, changed only if it is a
// governed resource.
func FuzzCheckPlacement(f *testing.F) {
	// Files named in a config are not fuzzed.
	krmtest.AddSeeds(f, func(c krmtest.Case) bool { return c.Config != nil },
		"kind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: p, namespace: fleetpolicy-placement, labels: {fleetpolicy.io/placement-policy: cel}}\n  data: [1]\n",
		"kind: ResourceList\nitems:\n- apiVersion: cluster.open-cluster-management.io/v1\n  kind: ManagedCluster\n  metadata: {name: a}\n  status: {clusterClaims: x}\n",
		"kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: CheckPlacement, timeout: -1s}\n")
	f.Fuzz(func(t *testing.T, input []byte) {
		in, got, _, ok := krmtest.FuzzRun(t, checkPlacement, input)
		if !ok {
			return
		}
		if len(got.Items) != len(in.Items) {
			t.Fatalf("%d items in, %d out", len(in.Items), len(got.Items))
		}
		for i := range in.Items {
			// (isGoverned panics on an item holding an alias, which Run
			// gives back unchanged.)
			if got.Items[i].String() != in.Items[i].String() && !isGoverned(in.Items[i]) {
				t.Fatalf("item %d changed:\n--- got\n%s\n--- want\n%s", i, got.Items[i].String(), in.Items[i].String())
			}
		}
	})
}
