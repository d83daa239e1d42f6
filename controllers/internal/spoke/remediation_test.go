package spoke_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestParentActionInheritedExceptInformOnly syncs an enforcing Policy with two
// ConfigurationPolicy templates: one without a remediationAction, which OCM
// gives the parent's enforce (so it creates its ConfigMap), and one saying
// InformOnly, which OCM keeps at inform whatever the parent says.
func TestParentActionInheritedExceptInformOnly(t *testing.T) {
	const ns, data = "inherit", "inherit-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	withoutAction := strings.Replace(configPolicy("inherit-bare", "x", "musthave", data, "bare"), "remediationAction: x, ", "", 1)
	informOnly := configPolicy("inherit-only", "InformOnly", "musthave", data, "only")
	root := strings.Replace(policyOf(ns, "i", withoutAction, ""),
		"disabled: false", "disabled: false\n  remediationAction: enforce", 1) +
		"  - objectDefinition: " + informOnly + "\n"
	testkit.Apply(t, hubC, root)
	bindToCluster(t, ns, "i")

	bare := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "bare"}}
	testkit.Eventually(t, 45*time.Second, "the template without remediationAction enforces", func() string {
		if !exists(t, spokeC, bare) {
			return "the ConfigMap of the template without remediationAction was not created"
		}
		return ""
	})
	if cp := spokeConfigPolicy(t, "inherit-bare"); cp == nil || cp.Spec.RemediationAction != "enforce" {
		t.Fatalf("the template without remediationAction did not get the parent's: %+v", cp)
	}
	testkit.Eventually(t, 45*time.Second, "the InformOnly template is synced and evaluated", func() string {
		cp := spokeConfigPolicy(t, "inherit-only")
		if cp == nil {
			return "not synced"
		}
		if cp.Spec.RemediationAction != "inform" {
			return "remediationAction is " + string(cp.Spec.RemediationAction)
		}
		if cp.Status.ComplianceState != policyv1.NonCompliant {
			return "compliance is " + string(cp.Status.ComplianceState)
		}
		return ""
	})
	if only := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "only"}}); exists(t, spokeC, only) {
		t.Error("the InformOnly template was enforced")
	}
}
