package spoke_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/governancemetrics"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

// TestCustomMessage: a ConfigurationPolicy's spec.customMessage replaces the
// compliance message in the policy's history, over .DefaultMessage and .Policy.
func TestCustomMessage(t *testing.T) {
	const ns, data = "custom-message", "custom-message-data"
	compliantRoot(t, ns, data, `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: cmsg-cm},
        spec: {remediationAction: enforce,
          customMessage: {compliant: '{{ .Policy.metadata.name }} keeps {{ len .Policy.status.relatedObjects }} ConfigMap in place'},
          object-templates: [{complianceType: musthave,
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: made, namespace: custom-message-data}, data: {k: v}}}]}}`)
	const want = "Compliant; cmsg-cm keeps 1 ConfigMap in place"
	testkit.Eventually(t, 45*time.Second, "the custom message in the history", func() string {
		if msg := newestMessage(spokePolicy(t, ns, "p"), 0); msg != want {
			return "newest history message " + msg
		}
		return ""
	})
}

// TestTerminatingInclusionNever: with namespaceSelector.terminatingInclusion
// Never, a namespace being deleted is not selected, so an enforced policy does
// not try to create its object there (the API server would refuse) and is
// Compliant.
func TestTerminatingInclusionNever(t *testing.T) {
	const ns, data = "terminating-never", "tinc-live"
	ctx := context.Background()
	gone := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tinc-gone"}}
	if err := localplane.EnsureNamespace(ctx, spokeC, gone.Name); err != nil {
		t.Fatal(err)
	}
	// No namespace controller runs here: a deleted namespace stays Terminating.
	if err := spokeC.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	compliantRoot(t, ns, data, `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: tinc-cm},
        spec: {remediationAction: enforce,
          namespaceSelector: {include: ["tinc-*"], terminatingInclusion: Never},
          object-templates: [{complianceType: musthave,
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: made}, data: {k: v}}}]}}`)
	if cmUID(t, data, "made") == "" {
		t.Error("the ConfigMap was not created in the live namespace")
	}
}

// TestGovernanceMetric: spec.severity labels OCM's cluster_policy_governance_info
// series of the ConfigurationPolicy, which is 0 while it is Compliant.
func TestGovernanceMetric(t *testing.T) {
	const ns, data = "governance-metric", "governance-metric-data"
	compliantRoot(t, ns, data, `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: gm-cm},
        spec: {remediationAction: enforce, severity: high,
          object-templates: [{complianceType: musthave,
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: made, namespace: governance-metric-data}, data: {k: v}}}]}}`)
	testkit.Eventually(t, 30*time.Second, "the governance metric of gm-cm", func() string {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			return err.Error()
		}
		for _, f := range families {
			if f.GetName() != governancemetrics.Name {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["policy"] == "gm-cm" && labels["kind"] == "ConfigurationPolicy" {
					if labels["severity"] != "high" || m.GetGauge().GetValue() != 0 {
						return fmt.Sprintf("series %v = %v, want severity high and 0", labels, m.GetGauge().GetValue())
					}
					return ""
				}
			}
		}
		return "no series for gm-cm"
	})
}
