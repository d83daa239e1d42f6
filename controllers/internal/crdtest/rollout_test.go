package crdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
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
	// A Policy's spec.rolloutStrategy and a RolloutPlan's spec.strategy (the
	// hub reads both; one it cannot decode stops it reading any).
	kinds := []struct {
		base string
		path []string
	}{
		{validPolicy, []string{"spec", "rolloutStrategy"}},
		{validRolloutPlan, []string{"spec", "strategy"}},
	}
	for i, tc := range cases {
		for _, kind := range kinds {
			t.Run(kind.path[1]+"/"+tc.strategy, func(t *testing.T) {
				want := sharedRuleAccepts(t, tc.strategy)
				if want == tc.laxSchema && (tc.laxSchema || tc.stricterSchema) {
					t.Fatalf("the shared rule accepts it: %v; the case says the schema differs from the rule", want)
				}
				want = (want || tc.laxSchema) && !tc.stricterSchema
				obj := parseOne(t, kind.base)[0]
				obj.SetName(fmt.Sprintf("rollout-%d", i))
				applyStrategy(ctx, t, obj, tc.strategy, kind.path, want)
			})
		}
	}
}

const validRolloutPlan = `
apiVersion: fleetpolicy.io/v1alpha1
kind: RolloutPlan
metadata: {name: p, namespace: invalid}
spec:
  policyRef: {name: p, namespace: invalid}
  strategy: {type: All}
  waves:
  - {index: 0, clusters: [c1], decisionGroups: [], mandatory: false, notBefore: 0s}
`

// applyStrategy sets the strategy at path of obj, applies obj and checks that
// the API server stores it exactly when want says.
func applyStrategy(ctx context.Context, t *testing.T, obj *unstructured.Unstructured, doc string, path []string, want bool) {
	t.Helper()
	strategy := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &strategy); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, strategy, path...); err != nil {
		t.Fatal(err)
	}
	stored, err := localplane.Apply(ctx, hub.Client, []*unstructured.Unstructured{obj})
	switch {
	case want && err != nil:
		t.Fatalf("the shared rule accepts it, the API server refused it: %v", err)
	case !want && err == nil:
		t.Fatal("the shared rule refuses it (or Go cannot decode it), the API server stored it")
	case !want && !strings.Contains(err.Error(), strings.Join(path, ".")):
		t.Fatalf("the refusal does not name %s: %v", strings.Join(path, "."), err)
	}
	if err == nil {
		if err := hub.Client.Delete(ctx, stored[0]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRolloutPlanWaveStartRefusedUnlessADuration: a wave's notBefore that Go
// cannot parse, or a negative one, is refused (an overflowing one is not: see
// the field's documentation).
func TestRolloutPlanWaveStartRefusedUnlessADuration(t *testing.T) {
	ctx := context.Background()
	for i, tc := range []struct {
		notBefore string
		valid     bool
	}{{"5m0s", true}, {"0s", true}, {"5sjunk", false}, {"-5s", false}, {"", false}} {
		obj := parseOne(t, validRolloutPlan)[0]
		obj.SetName(fmt.Sprintf("wave-%d", i))
		waves, _, _ := unstructured.NestedSlice(obj.Object, "spec", "waves")
		waves[0].(map[string]any)["notBefore"] = tc.notBefore
		if err := unstructured.SetNestedSlice(obj.Object, waves, "spec", "waves"); err != nil {
			t.Fatal(err)
		}
		stored, err := localplane.Apply(ctx, hub.Client, []*unstructured.Unstructured{obj})
		if (err == nil) != tc.valid {
			t.Errorf("notBefore %q: stored %v, want %v (%v)", tc.notBefore, err == nil, tc.valid, err)
		}
		if err == nil {
			_ = hub.Client.Delete(ctx, stored[0])
		}
	}
}

// TestRolloutRulesSameOnPolicyAndPlan: the RolloutPlan's strategy carries the
// very rules of the Policy's rolloutStrategy (the markers are written twice).
func TestRolloutRulesSameOnPolicyAndPlan(t *testing.T) {
	rules := func(file string, path ...string) []any {
		root := testkit.RepoRoot(t)
		raw, err := os.ReadFile(filepath.Join(root, "manifests", "crds", "fleetpolicy", file))
		if err != nil {
			t.Fatal(err)
		}
		crd := map[string]any{}
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
		schema := versions[0].(map[string]any)
		full := append([]string{"schema", "openAPIV3Schema", "properties", "spec", "properties"}, path...)
		got, _, _ := unstructured.NestedSlice(schema, append(full, "x-kubernetes-validations")...)
		return got
	}
	policy := rules("policy.open-cluster-management.io_policies.yaml", "rolloutStrategy")
	plan := rules("fleetpolicy.io_rolloutplans.yaml", "strategy")
	if len(policy) == 0 || !reflect.DeepEqual(policy, plan) {
		t.Fatalf("the rules differ:\nPolicy: %v\nRolloutPlan: %v", policy, plan)
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
