package main

import (
	"testing"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// FuzzPlanRollout feeds arbitrary input to the function: it must never panic,
// must always answer with a ResourceList and exit code 0 or 1, must give back
// every item of a readable input that is not a RolloutPlan unchanged and in
// order.
func FuzzPlanRollout(f *testing.F) {
	for _, c := range krmtest.Cases(f, "testdata") {
		f.Add(c.ResourceList(f))
	}
	f.Add([]byte(krmtest.AliasedItems))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 1\n- [a]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1\n  kind: Policy\n  metadata: {name: p, namespace: n}\n  spec: {rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: [1]}}}\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: cluster.open-cluster-management.io/v1beta1\n  kind: PlacementDecision\n  metadata: {name: d, namespace: n, labels: {cluster.open-cluster-management.io/placement: p}}\n  status: {decisions: [{clusterName: 7}]}\n"))
	f.Add([]byte("kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: PlanRollout, policies: [/]}\n"))
	// A fixed clock keeps runs reproducible.
	fuzzed := krm.Function{Name: planRollout.Name, Process: func(rl *fn.ResourceList) error {
		return process(rl, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}}
	f.Fuzz(func(t *testing.T, input []byte) {
		in, got, _, ok := krmtest.FuzzRun(t, fuzzed, input)
		if !ok {
			return
		}
		var kept []*fn.KubeObject
		for _, item := range got.Items {
			if !isRolloutPlan(item) {
				kept = append(kept, item)
			}
		}
		var want []*fn.KubeObject
		for _, item := range in.Items {
			if !isRolloutPlan(item) {
				want = append(want, item)
			}
		}
		if len(kept) != len(want) {
			t.Fatalf("%d items in, %d out", len(want), len(kept))
		}
		for i := range want {
			if kept[i].String() != want[i].String() {
				t.Fatalf("item %d changed:\n--- got\n%s\n--- want\n%s", i, kept[i].String(), want[i].String())
			}
		}
	})
}
