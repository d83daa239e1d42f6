package hub_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

// expectCondition waits until the root's condition of type cond has the
// status, the reason and a message containing message; status "" waits for the
// condition to be gone.
func expectCondition(t *testing.T, ns, name, cond string, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	localplane.Eventually(t, 20*time.Second, fmt.Sprintf("%s/%s condition %s %s", ns, name, cond, status), func() string {
		got := meta.FindStatusCondition(rootStatus(t, ns, name).Conditions, cond)
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
	applyYAML(t, policyYAML(ns, long, "inform"))
	applyYAML(t, policyWithStrategy(ns, "strategy", "{type: All, progressive: {maxConcurrency: 2}}"))
	applyYAML(t, localplane.PlacementRuleBinding(ns, "pb", "cluster-a", long, "strategy"))

	expectCondition(t, ns, long, hub.ConditionInvalid, metav1.ConditionTrue, "NameTooLong",
		"the combined length of the policy namespace and name cannot exceed 62 characters")
	expectCondition(t, ns, "strategy", hub.ConditionInvalid, metav1.ConditionTrue, "RolloutInvalid",
		"spec.rolloutStrategy.progressive: Forbidden: is ignored when type is All")
	expectReplicas(t, ns, "strategy", map[string]string{})
	expectReplicas(t, ns, long, map[string]string{})

	applyYAML(t, policyWithStrategy(ns, "strategy", "{type: Progressive, progressive: {maxConcurrency: 2}}"))
	expectCondition(t, ns, "strategy", hub.ConditionInvalid, "", "", "")
	expectReplicas(t, ns, "strategy", want(nil, []string{"cluster-a"}))
}

// TestPolicyInClusterNamespaceIsNoRoot: as in OCM, a Policy in a
// ManagedCluster's namespace is never propagated (the placement webhook does
// not govern cluster namespaces), and the hub says so on it.
func TestPolicyInClusterNamespaceIsNoRoot(t *testing.T) {
	ns := "cluster-f"
	applyYAML(t, policyYAML(ns, "tenant", "enforce"))
	applyYAML(t, localplane.PlacementRuleBinding(ns, "tenant-pb", "cluster-a", "tenant"))
	expectCondition(t, ns, "tenant", hub.ConditionInvalid, metav1.ConditionTrue, "InClusterNamespace",
		"namespace cluster-f belongs to ManagedCluster cluster-f")
	expectReplicas(t, ns, "tenant", map[string]string{})
}

// TestMaxConcurrencyZeroWarns: a Progressive rollout whose maxConcurrency is
// unset enforces on every cluster at once, as in OCM; the root's
// RolloutWarning condition says so, and goes when maxConcurrency is set.
func TestMaxConcurrencyZeroWarns(t *testing.T) {
	ns := "all-at-once"
	applyYAML(t, policyWithStrategy(ns, "p", "{type: Progressive, progressive: {minSuccessTime: 1h}}"))
	applyYAML(t, ruleYAML(ns, "rule", "cluster-a", "cluster-b", "cluster-c"))
	applyYAML(t, bindingYAML(ns, "pb", "rule", "p", ""))
	expectCondition(t, ns, "p", hub.ConditionRolloutWarning, metav1.ConditionTrue, "RolloutNotApplied",
		"spec.rolloutStrategy.progressive.maxConcurrency: unset or 0 means every cluster at once, as in OCM's rollout library: "+
			"this Progressive rollout enforces on all 3 non-mandatory clusters in one wave")
	expectReplicas(t, ns, "p", want(nil, []string{"cluster-a", "cluster-b", "cluster-c"}))

	applyYAML(t, policyWithStrategy(ns, "p", "{type: Progressive, progressive: {maxConcurrency: 1}}"))
	expectCondition(t, ns, "p", hub.ConditionRolloutWarning, "", "", "")
}
