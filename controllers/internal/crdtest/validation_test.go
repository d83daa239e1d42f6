package crdtest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

const validPolicy = `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: p, namespace: invalid}
spec:
  disabled: false
  remediationAction: inform
  policy-templates: []
`

const validBinding = `
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: invalid}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}]
`

const validOperatorPolicy = `
apiVersion: policy.open-cluster-management.io/v1beta1
kind: OperatorPolicy
metadata: {name: op, namespace: invalid}
spec:
  remediationAction: enforce
  subscription: {name: my-operator, namespace: ops, channel: stable}
  allowedCSVs: [my-operator.v1.0.0]
`

const validConfigurationPolicy = `
apiVersion: policy.open-cluster-management.io/v1
kind: ConfigurationPolicy
metadata: {name: cp, namespace: invalid}
spec:
  remediationAction: inform
  object-templates:
  - complianceType: musthave
    objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: x}}
`

const validPolicySet = `
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: ps, namespace: invalid}
spec:
  policies: [a, b]
  exclusions: [{policyName: b, reason: not on c1 yet, clusterNames: [c1]}]
`

// TestInvalidObjectsRefused checks that the CRDs refuse what users would expect
// them to refuse, with a message naming the field. Each case first proves its
// valid base is accepted, so a refusal is caused by the one change the case makes.
func TestInvalidObjectsRefused(t *testing.T) {
	cases := []struct {
		name, base, patch string
		wantField         string
	}{
		{"policy remediationAction enum", validPolicy, "spec: {remediationAction: Enforcing}", "spec.remediationAction"},
		{"policy rollout type enum", validPolicy, "spec: {rolloutStrategy: {type: Canary}}", "spec.rolloutStrategy.type"},
		{"policy rollout maxConcurrency pattern", validPolicy, "spec: {rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: 120%}}}", "spec.rolloutStrategy.progressive.maxConcurrency"},
		{"policy dependency compliance enum", validPolicy, "spec: {dependencies: [{kind: Policy, name: a, compliance: Green}]}", "spec.dependencies[0].compliance"},
		{"policy dependency name required", validPolicy, "spec: {dependencies: [{kind: Policy, compliance: Compliant}]}", "spec.dependencies[0].name"},
		{"namespaced ConfigurationPolicy dependency", validPolicy, "spec: {dependencies: [{kind: ConfigurationPolicy, name: a, namespace: b, compliance: Compliant}]}", "namespace must be empty for ConfigurationPolicy"},
		{"binding placementRef pairing", validBinding, "placementRef: {apiGroup: apps.open-cluster-management.io, kind: Placement, name: pl}", "placementRef"},
		{"binding without subjects", validBinding, "subjects: []", "subjects"},
		{"binding subject kind enum", validBinding, "subjects: [{apiGroup: policy.open-cluster-management.io, kind: ConfigMap, name: p}]", "subjects[0].kind"},
		{"binding override enum (OCM)", validBinding, "bindingOverrides: {remediationAction: inform}", "bindingOverrides.remediationAction"},
		{"binding override enum (fleetpolicy)", validBinding, "remediationActionOverride: {remediationAction: inform}", "remediationActionOverride.remediationAction"},
		{"binding subFilter enum", validBinding, "subFilter: everything", "subFilter"},
		{"binding spellings disagree on subFilter", validBinding, "remediationActionOverride: {remediationAction: enforce, subFilter: false}\nsubFilter: restricted", "remediationActionOverride.subFilter and subFilter disagree"},
		{"operator policy without subscription name", validOperatorPolicy, "spec: {subscription: {name: null}}", "spec.subscription.name"},
		{"operator policy empty allowedCSVs", validOperatorPolicy, "spec: {allowedCSVs: []}", "spec.allowedCSVs"},
		{"operator policy allowedCSVs and versions disagree", validOperatorPolicy, "spec: {versions: [my-operator.v2.0.0]}", "allowedCSVs and versions disagree"},
		{"operator policy installPlanApproval enum", validOperatorPolicy, "spec: {subscription: {installPlanApproval: Sometimes}}", "spec.subscription.installPlanApproval"},
		{"operator policy upgradeApproval enum", validOperatorPolicy, "spec: {upgradeApproval: Manual}", "spec.upgradeApproval"},
		{"operator policy status configs disagree", validOperatorPolicy, "spec: {statusConfig: {deploymentsUnavailable: NonCompliant}, complianceConfig: {deploymentsUnavailable: Compliant}}", "statusConfig.deploymentsUnavailable and complianceConfig.deploymentsUnavailable disagree"},
		{"operator policy statusConfig enum", validOperatorPolicy, "spec: {statusConfig: {upgradesAvailable: Compliant}}", "spec.statusConfig.upgradesAvailable"},
		{"operator policy removalBehavior enum", validOperatorPolicy, "spec: {removalBehavior: {subscriptions: DeleteIfUnused}}", "spec.removalBehavior.subscriptions"},
		{"operator policy complianceType enum", validOperatorPolicy, "spec: {complianceType: mustonlyhave}", "spec.complianceType"},
		{"operator group target both", validOperatorPolicy, "spec: {operatorGroup: {name: og, target: {namespaces: [a], selector: {matchLabels: {a: b}}}}}", "one of namespaces or selector"},
		{"configuration policy complianceType enum", validConfigurationPolicy, "spec: {object-templates: [{complianceType: shouldhave, objectDefinition: {apiVersion: v1, kind: Namespace}}]}", "complianceType"},
		{"configuration policy without templates", validConfigurationPolicy, "spec: {object-templates: []}", "spec.object-templates"},
		{"configuration policy recordDiff enum", validConfigurationPolicy, "spec: {object-templates: [{complianceType: musthave, recordDiff: Everywhere, objectDefinition: {apiVersion: v1, kind: Namespace}}]}", "spec.object-templates[0].recordDiff"},
		{"configuration policy recreateOption enum", validConfigurationPolicy, "spec: {object-templates: [{complianceType: musthave, recreateOption: IfNeeded, objectDefinition: {apiVersion: v1, kind: Namespace}}]}", "spec.object-templates[0].recreateOption"},
		{"policyset empty policy name", validPolicySet, "spec: {policies: ['']}", "spec.policies[0]"},
		{"policyset duplicate exclusion", validPolicySet, "spec: {exclusions: [{policyName: a, clusterNames: [c1]}, {policyName: a, clusterNames: [c2]}]}",
			`spec.exclusions[1]: Duplicate value: {"policyName":"a"}`},
		{"policyset exclusion without clusters", validPolicySet, "spec: {exclusions: [{policyName: a, clusterNames: []}]}", "spec.exclusions[0].clusterNames"},
		{"policyset exclusion with an empty cluster name", validPolicySet, "spec: {exclusions: [{policyName: a, clusterNames: ['']}]}", "spec.exclusions[0].clusterNames[0]"},
		{"policyset exclusion without policyName", validPolicySet, "spec: {exclusions: [{clusterNames: [c1]}]}", "spec.exclusions[0].policyName"},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			valid := parseOne(t, tc.base)
			stored, err := localplane.Apply(ctx, hub.Client, valid)
			if err != nil {
				t.Fatalf("valid base refused: %v", err)
			}
			if err := hub.Client.Delete(ctx, stored[0]); err != nil {
				t.Fatal(err)
			}
			invalid := parseOne(t, tc.base)
			mergePatch(invalid[0].Object, parseOne(t, tc.patch)[0].Object)
			_, err = localplane.Apply(ctx, hub.Client, invalid)
			if err == nil {
				t.Fatalf("accepted, want refusal naming %q", tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Fatalf("refusal does not name %q: %v", tc.wantField, err)
			}
		})
	}
}

// TestAdmittedAsOCMAdmits checks that the CRDs admit what OCM v0.19's admit
// and its controllers report in status instead: refused here, such a manifest
// would fail a whole sync (or a spoke's template) where OCM shows the problem
// on the object. Each case is stored unchanged; the spoke's status reports it
// (controllers/internal/operatorpolicy TestApprovalSpellingsDisagree).
func TestAdmittedAsOCMAdmits(t *testing.T) {
	cases := []struct {
		name, base, patch string
	}{
		// OCM's CRD keeps any spec.subscription key; its controller reports
		// installPlanApproval as InvalidPolicySpec. Ours takes it as
		// fleetpolicy's spelling and reports a disagreement the same way.
		{"operator policy approval spellings disagree (Manual, Automatic)", validOperatorPolicy,
			"spec: {subscription: {installPlanApproval: Manual}, upgradeApproval: Automatic}"},
		{"operator policy approval spellings disagree (Automatic, None)", validOperatorPolicy,
			"spec: {subscription: {installPlanApproval: Automatic}, upgradeApproval: None}"},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := parseOne(t, tc.base)
			mergePatch(obj[0].Object, parseOne(t, tc.patch)[0].Object)
			want := obj[0].DeepCopy()
			stored, err := localplane.Apply(ctx, hub.Client, obj)
			if err != nil {
				t.Fatalf("refused, want it admitted as OCM admits it: %v", err)
			}
			t.Cleanup(func() { _ = hub.Client.Delete(ctx, stored[0]) })
			for _, path := range [][]string{{"spec", "subscription", "installPlanApproval"}, {"spec", "upgradeApproval"}} {
				got, _, _ := unstructured.NestedString(stored[0].Object, path...)
				wantValue, _, _ := unstructured.NestedString(want.Object, path...)
				if got != wantValue {
					t.Errorf("%s stored as %q, want %q", strings.Join(path, "."), got, wantValue)
				}
			}
		})
	}
}
