package spoke_test

import (
	"testing"
	"time"

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
