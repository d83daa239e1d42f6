package crdtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// TestRolloutStrategyRefusedAsTheSharedRuleRefuses applies Policies whose
// rolloutStrategy holds one duration or count each, and holds the API server to
// the one rule in shared/rollout: a strategy is stored exactly when Go decodes
// it (else the hub could not read the Policy at all) and ResolveStrategy
// accepts it. The few values OCM's own schema refuses although the rule would
// accept them are listed as such.
func TestRolloutStrategyRefusedAsTheSharedRuleRefuses(t *testing.T) {
	cases := []struct {
		strategy string
		// stricterSchema marks a value OCM's CRD schema (its pattern) refuses
		// that ResolveStrategy accepts: the API server must refuse it.
		stricterSchema bool
		// laxSchema marks a value the schema stores although the rule refuses
		// it (CEL's cost budget leaves no room to tell an empty groupName from
		// a missing one): the hub reports it on the root's Invalid condition.
		laxSchema bool
	}{
		{strategy: `{type: Progressive, progressive: {minSuccessTime: 5m}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: 1h30m}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: "1.5h"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: ".5s"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: "0"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: "-0s"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: "+5s"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: 5sjunk}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: "-5s"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: ""}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: 1d}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: "5"}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: 5mh}}`},
		{strategy: `{type: Progressive, progressive: {minSuccessTime: 99999999999999h}}`},
		{strategy: `{type: All, all: {minSuccessTime: 5sjunk}}`},
		{strategy: `{type: ProgressivePerGroup, progressivePerGroup: {minSuccessTime: "-1m"}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: None}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: 90s}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: 10m30s}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: 5ms}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: 0s}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: 5sjunk}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: "-5s"}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: "1.5h"}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: xNone}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: 99999999999999h}}`},
		{strategy: `{type: Progressive, progressive: {progressDeadline: ""}}`, stricterSchema: true},
		{strategy: `{type: All, all: {progressDeadline: 5mjunk}}`},
		{strategy: `{type: ProgressivePerGroup, progressivePerGroup: {progressDeadline: 1h}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 3}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: "3"}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 50%}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 0%}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: -1}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: "-1"}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 101%}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 2147483647}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 2147483648}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: "2147483648"}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: "99999999999999999999"}}`},
		{strategy: `{type: Progressive, progressive: {maxFailures: 007%}}`, stricterSchema: true},
		{strategy: `{type: ProgressivePerGroup, progressivePerGroup: {maxFailures: -2}}`},
		{strategy: `{type: All, all: {maxFailures: -2}}`},
		{strategy: `{type: Progressive, progressive: {maxConcurrency: 0}}`},
		{strategy: `{type: Progressive, progressive: {maxConcurrency: 5}}`},
		{strategy: `{type: Progressive, progressive: {maxConcurrency: 1%}}`},
		{strategy: `{type: Progressive, progressive: {maxConcurrency: 0%}}`},
		{strategy: `{type: Progressive, progressive: {maxConcurrency: -2}}`},
		{strategy: `{type: Progressive, progressive: {mandatoryDecisionGroups: [{groupIndex: 0}]}}`},
		{strategy: `{type: Progressive, progressive: {mandatoryDecisionGroups: [{groupIndex: -1}]}}`},
		{strategy: `{type: Progressive, progressive: {mandatoryDecisionGroups: [{groupName: canary, groupIndex: -1}]}}`},
		{strategy: `{type: ProgressivePerGroup, progressivePerGroup: {mandatoryDecisionGroups: [{groupIndex: -3}]}}`},
		{strategy: `{type: ProgressivePerGroup, progressivePerGroup: {mandatoryDecisionGroups: [{groupName: "", groupIndex: -3}]}}`, laxSchema: true},
		{strategy: `{type: ProgressivePerGroup, progressivePerGroup: {mandatoryDecisionGroups: [{groupIndex: 2147483648}]}}`},
	}
	ctx := context.Background()
	for i, tc := range cases {
		t.Run(tc.strategy, func(t *testing.T) {
			want := sharedRuleAccepts(t, tc.strategy)
			if want == tc.laxSchema && (tc.laxSchema || tc.stricterSchema) {
				t.Fatalf("the shared rule accepts it: %v; the case says the schema differs from the rule", want)
			}
			want = (want || tc.laxSchema) && !tc.stricterSchema
			policy := parseOne(t, validPolicy)[0]
			policy.SetName(fmt.Sprintf("rollout-%d", i))
			strategy := map[string]any{}
			if err := yaml.Unmarshal([]byte(tc.strategy), &strategy); err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedField(policy.Object, strategy, "spec", "rolloutStrategy"); err != nil {
				t.Fatal(err)
			}
			stored, err := localplane.Apply(ctx, hub.Client, []*unstructured.Unstructured{policy})
			switch {
			case want && err != nil:
				t.Fatalf("the shared rule accepts it, the API server refused it: %v", err)
			case !want && err == nil:
				t.Fatal("the shared rule refuses it (or Go cannot decode it), the API server stored it")
			case !want && !strings.Contains(err.Error(), "spec.rolloutStrategy"):
				t.Fatalf("the refusal does not name spec.rolloutStrategy: %v", err)
			}
			if err == nil {
				if err := hub.Client.Delete(ctx, stored[0]); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// sharedRuleAccepts reports whether Go decodes the strategy and
// rollout.ResolveStrategy accepts it.
func sharedRuleAccepts(t *testing.T, doc string) bool {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var strategy clusterv1alpha1.RolloutStrategy
	if err := yaml.Unmarshal(raw, &strategy); err != nil {
		return false
	}
	_, err = rollout.ResolveStrategy(strategy, nil)
	return err == nil
}
