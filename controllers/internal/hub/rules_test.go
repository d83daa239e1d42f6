package hub_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

// expectCondition waits until the root's condition of type cond has the
// status, the reason and a message containing message; status "" waits for the
// condition to be gone.
func expectCondition(t *testing.T, ns, name, cond string, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("%s/%s condition %s %s", ns, name, cond, status), func() string {
		got := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, name).Conditions, cond)
		switch {
		case status == "" && got != nil:
			return fmt.Sprintf("still there: %+v", got)
		case status == "":
			return ""
		case got == nil || got.Status != status || got.Reason != reason || !strings.Contains(got.Message, message):
			return fmt.Sprintf("condition %+v", got)
		}
		return ""
	})
}

// policyWithStrategy is policyYAML's enforcing policy with a rolloutStrategy.
func policyWithStrategy(ns, name, strategy string) string {
	return strings.Replace(policyYAML(ns, name, "enforce"), "  remediationAction: enforce\n",
		"  remediationAction: enforce\n  rolloutStrategy: "+strategy+"\n", 1)
}

// TestInvalidRootsReportedOnTheRoot: what gets past admission (here the plane
// has no admission rule for the name, and a strategy block of another type is
// valid to the schema) is reported as the root's Invalid condition, no replica
// is written, and the condition goes once the root is fixed.
func TestInvalidRootsReportedOnTheRoot(t *testing.T) {
	ns := "invalid-roots"
	long := strings.Repeat("p", 62-len(ns)+1) // one character too many
	testkit.Apply(t, c, policyYAML(ns, long, "inform"))
	testkit.Apply(t, c, policyWithStrategy(ns, "strategy", "{type: All, progressive: {maxConcurrency: 2}}"))
	testkit.Apply(t, c, testkit.PlacementRuleBinding(ns, "pb", []string{"cluster-a"}, long, "strategy"))

	expectCondition(t, ns, long, hub.ConditionInvalid, metav1.ConditionTrue, "NameTooLong",
		"the combined length of the policy namespace and name cannot exceed 62 characters")
	expectCondition(t, ns, "strategy", hub.ConditionInvalid, metav1.ConditionTrue, "RolloutInvalid",
		"spec.rolloutStrategy.progressive: Forbidden: is ignored when type is All")
	expectReplicas(t, ns, "strategy", map[string]string{})
	expectReplicas(t, ns, long, map[string]string{})

	testkit.Apply(t, c, policyWithStrategy(ns, "strategy", "{type: Progressive, progressive: {maxConcurrency: 2}}"))
	expectCondition(t, ns, "strategy", hub.ConditionInvalid, "", "", "")
	expectReplicas(t, ns, "strategy", want(nil, []string{"cluster-a"}))
}

// TestPolicyInClusterNamespaceIsNoRoot: as in OCM, a Policy in a
// ManagedCluster's namespace is never propagated (the placement webhook does
// not govern cluster namespaces), and the hub says so on it.
func TestPolicyInClusterNamespaceIsNoRoot(t *testing.T) {
	ns := "cluster-f"
	testkit.Apply(t, c, policyYAML(ns, "tenant", "enforce"))
	testkit.Apply(t, c, testkit.PlacementRuleBinding(ns, "tenant-pb", []string{"cluster-a"}, "tenant"))
	expectCondition(t, ns, "tenant", hub.ConditionInvalid, metav1.ConditionTrue, "InClusterNamespace",
		"namespace cluster-f belongs to ManagedCluster cluster-f")
	expectReplicas(t, ns, "tenant", map[string]string{})
}

// TestMaxConcurrencyZeroWarns: a Progressive rollout whose maxConcurrency is
// unset enforces on every cluster at once, as in OCM; the root's
// RolloutWarning condition says so, and goes when maxConcurrency is set.
func TestMaxConcurrencyZeroWarns(t *testing.T) {
	ns := "all-at-once"
	testkit.Apply(t, c, policyWithStrategy(ns, "p", "{type: Progressive, progressive: {minSuccessTime: 1h}}"))
	testkit.Apply(t, c, ruleYAML(ns, "rule", "cluster-a", "cluster-b", "cluster-c"))
	testkit.Apply(t, c, bindingYAML(ns, "pb", "rule", "p", ""))
	expectCondition(t, ns, "p", hub.ConditionRolloutWarning, metav1.ConditionTrue, "RolloutNotApplied",
		"spec.rolloutStrategy.progressive.maxConcurrency: unset or 0 means every cluster at once, as in OCM's rollout library: "+
			"this Progressive rollout enforces on all 3 non-mandatory clusters in one wave")
	expectReplicas(t, ns, "p", want(nil, []string{"cluster-a", "cluster-b", "cluster-c"}))

	testkit.Apply(t, c, policyWithStrategy(ns, "p", "{type: Progressive, progressive: {maxConcurrency: 1}}"))
	expectCondition(t, ns, "p", hub.ConditionRolloutWarning, "", "", "")
}

// placementDecisionYAML is PlacementDecision <placement>-decision-1 of a
// Placement, with the given decision-group-index label (none when index is
// "-") and clusterNames (an empty one is written as "").
func placementDecisionYAML(ns, placement, index string, clusterNames ...string) string {
	labels := fmt.Sprintf("{%s: %s", clusterv1beta1.PlacementLabel, placement)
	if index != "-" {
		labels += fmt.Sprintf(", %s: %q", clusterv1beta1.DecisionGroupIndexLabel, index)
	}
	decisions := ""
	for _, cl := range clusterNames {
		decisions += fmt.Sprintf("\n  - {clusterName: %q, reason: \"\"}", cl)
	}
	return fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata: {name: %s-decision-1, namespace: %s, labels: %s}}
status:
  decisions:%s
`, placement, ns, labels, decisions)
}

// TestPlacementDecisionsReadAsPlanRollout: the hub reads PlacementDecisions as
// plan-rollout does (scheduling.GroupOf). A decision-group-index label that is
// no index stops only a root whose rollout orders clusters by group: it is
// reported as that root's Invalid condition, naming the PlacementDecision and
// the label, with no replica written (plan-rollout refuses it too). Any other
// root bound through the Placement (restricted bindings included) propagates
// to the decision's clusters, as OCM's propagator does, which never reads the
// label. Once fixed, every root propagates. A decision with an empty
// clusterName is not scheduled yet: it names no cluster, so the root does not
// list "" as a decided cluster without a ManagedCluster.
func TestPlacementDecisionsReadAsPlanRollout(t *testing.T) {
	ns := "decision-labels"
	testkit.Apply(t, c, policyYAML(ns, "p", "enforce"))
	testkit.Apply(t, c, strings.Replace(policyYAML(ns, "rolled", "enforce"), "  disabled: false",
		"  disabled: false\n  rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: 1}}", 1))
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: %s}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}, {apiGroup: policy.open-cluster-management.io, kind: Policy, name: rolled}]
`, ns))
	testkit.Apply(t, c, placementDecisionYAML(ns, "pl", "first", "cluster-a"))
	// narrowed reaches pl only through a restricted binding.
	testkit.Apply(t, c, policyYAML(ns, "narrowed", "inform"))
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: narrowed-base, namespace: %[1]s}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: base}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: narrowed}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: narrowed-pl, namespace: %[1]s}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: narrowed}]
bindingOverrides: {remediationAction: enforce}
subFilter: restricted
`, ns))
	testkit.Apply(t, c, placementDecisionYAML(ns, "base", "0", "cluster-c"))
	expectCondition(t, ns, "rolled", hub.ConditionInvalid, metav1.ConditionTrue, "PlacementDecisionInvalid",
		`PlacementDecision decision-labels/pl-decision-1 of Placement pl: metadata.labels[cluster.open-cluster-management.io/decision-group-index]: Invalid value: "first"`)
	expectReplicas(t, ns, "rolled", map[string]string{})
	expectReplicas(t, ns, "p", want(nil, []string{"cluster-a"}))
	expectCondition(t, ns, "p", hub.ConditionInvalid, "", "", "")
	expectReplicas(t, ns, "narrowed", want([]string{"cluster-c"}, nil))
	expectCondition(t, ns, "narrowed", hub.ConditionInvalid, "", "", "")

	// No index label at all is group 0.
	testkit.Apply(t, c, placementDecisionYAML(ns, "pl", "-", "cluster-a", "", "cluster-b"))
	expectCondition(t, ns, "rolled", hub.ConditionInvalid, "", "", "")
	expectReplicas(t, ns, "p", want(nil, []string{"cluster-a", "cluster-b"}))
	expectCondition(t, ns, "narrowed", hub.ConditionInvalid, "", "", "")
	expectReplicas(t, ns, "narrowed", want([]string{"cluster-c"}, nil))
	// The status write that lists the clusters sets ClustersUnknown too.
	testkit.Eventually(t, 20*time.Second, "root status of the two clusters", func() string {
		if got := statusClusters(testkit.RootStatus(t, c, ns, "p")); fmt.Sprint(got) != "[cluster-a cluster-b]" {
			return fmt.Sprintf("status.status clusters %v", got)
		}
		return ""
	})
	if cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, "p").Conditions, hub.ConditionClustersUnknown); cond != nil {
		t.Errorf("an empty clusterName is read as a cluster: %+v", cond)
	}
}
