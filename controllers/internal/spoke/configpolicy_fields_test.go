package spoke_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
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
	localplane.Eventually(t, 45*time.Second, "the custom message in the history", func() string {
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
