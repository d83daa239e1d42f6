package hub_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestBindingOverridesIgnoredCondition: a binding's enforce override that the
// root's Progressive strategy ignores is named in the root's
// BindingOverridesIgnored condition while nothing is enforced by it; with type
// All the override applies (cluster-b enforces) and the condition is gone.
// About 1 s on the package's hub.
func TestBindingOverridesIgnoredCondition(t *testing.T) {
	ns := "overrides-ignored"
	testkit.Apply(t, c, strings.Replace(policyYAML(ns, "p", "inform"), "  disabled: false\n",
		"  disabled: false\n  rolloutStrategy: {type: Progressive}\n", 1))
	testkit.Apply(t, c, ruleYAML(ns, "base", "cluster-a", "cluster-b"))
	testkit.Apply(t, c, ruleYAML(ns, "enf", "cluster-b"))
	testkit.Apply(t, c, bindingYAML(ns, "base-pb", "base", "p", ""))
	testkit.Apply(t, c, bindingYAML(ns, "enf-pb", "enf", "p", "bindingOverrides: {remediationAction: Enforce}\nsubFilter: restricted"))

	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, nil))
	testkit.Eventually(t, 20*time.Second, "BindingOverridesIgnored names enf-pb", func() string {
		cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, "p").Conditions, hub.ConditionBindingOverridesIgnored)
		switch {
		case cond == nil:
			return "no condition"
		case cond.Status != metav1.ConditionTrue || cond.Reason != "RolloutStrategyNotAll" ||
			!strings.Contains(cond.Message, "PlacementBinding enf-pb: bindingOverrides.remediationAction enforce is ignored") ||
			!strings.Contains(cond.Message, "spec.rolloutStrategy.type is Progressive") || strings.Contains(cond.Message, "base-pb"):
			return fmt.Sprintf("condition %+v", *cond)
		}
		return ""
	})

	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
	get(t, p)
	p.Spec.RolloutStrategy.Type = "All"
	if err := c.Update(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, []string{"cluster-b"}))
	testkit.Eventually(t, 20*time.Second, "BindingOverridesIgnored cleared", func() string {
		if cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, "p").Conditions, hub.ConditionBindingOverridesIgnored); cond != nil {
			return fmt.Sprintf("condition %+v", *cond)
		}
		return ""
	})
}
