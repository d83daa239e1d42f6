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
	for _, c := range krmtest.Cases(f, "testdata") {
		if c.Config == nil { // files named in a config are not fuzzed
			f.Add(c.ResourceList(f))
		}
	}
	f.Add([]byte(krmtest.AliasedItems))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 1\n- [a]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: p, namespace: fleetpolicy-placement, labels: {fleetpolicy.io/placement-policy: cel}}\n  data: [1]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: cluster.open-cluster-management.io/v1\n  kind: ManagedCluster\n  metadata: {name: a}\n  status: {clusterClaims: x}\n"))
	f.Add([]byte("kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: CheckPlacement, timeout: -1s}\n"))
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
