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
	krmtest.AddSeeds(f, nil,
		"kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1\n  kind: Policy\n  metadata: {name: p, namespace: n}\n  spec: {rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: [1]}}}\n",
		"kind: ResourceList\nitems:\n- apiVersion: cluster.open-cluster-management.io/v1beta1\n  kind: PlacementDecision\n  metadata: {name: d, namespace: n, labels: {cluster.open-cluster-management.io/placement: p}}\n  status: {decisions: [{clusterName: 7}]}\n",
		"kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: PlanRollout, policies: [/]}\n")
	// A fixed clock keeps runs reproducible.
	fuzzed := krm.Function{Name: planRollout.Name, Process: func(rl *fn.ResourceList) error {
		return process(rl, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}}
	f.Fuzz(func(t *testing.T, input []byte) {
		if in, got, _, ok := krmtest.FuzzRun(t, fuzzed, input); ok {
			krmtest.CheckPassedThrough(t, in.Items, got.Items, isRolloutPlan)
		}
	})
}
