package main

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestThroughOrchestrators runs every golden case through kustomize, kpt fn
// render and kpt fn eval. The plans are local-config, which kustomize never
// emits: a build equals the build without the function. In a package, the
// plans written are the golden ones and every file that held no plan is left
// byte for byte.
func TestThroughOrchestrators(t *testing.T) {
	krmtest.Orchestrators{
		Function:         "plan-rollout",
		DefaultConfig:    []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: PlanRollout\nmetadata:\n  name: plan-rollout\n"),
		KustomizeRefuses: []string{"replace-existing"}, // two RolloutPlans with one id
		Package: func(t testing.TB, c krmtest.Case, before, after map[string]string) {
			t.Helper()
			krmtest.CheckWritten(t, c, before, after, planKey)
		},
	}.Run(t)
}

// planKey names a RolloutPlan by namespace/name.
func planKey(n *yaml.RNode, _ string) string {
	if n.GetKind() != "RolloutPlan" {
		return ""
	}
	return n.GetNamespace() + "/" + n.GetName()
}
