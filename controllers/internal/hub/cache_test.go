package hub

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// TestSlimPolicies: a cached replica keeps what the hub reads (labels,
// action, compliance and the generation it was evaluated at) and the digest of
// the full replica, which equals the desired replica's; a second pass keeps that
// digest; a root policy keeps its spec.
func TestSlimPolicies(t *testing.T) {
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "p", Annotations: map[string]string{"note": "x"}},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Enforce, PolicyTemplates: []*policyv1.PolicyTemplate{
			{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy"}`)}}}},
	}
	desired := replication.For(root, nil)
	stored := desired.Build("c1", policyv1.Enforce)
	stored.Generation, stored.ResourceVersion = 3, "42"
	stored.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "fleetpolicy-hub"}}
	stored.Status = policyv1.PolicyStatus{ComplianceState: policyv1.NonCompliant, ObservedGeneration: 3, RolloutStatus: policyv1.RolloutFailed,
		Details: []*policyv1.DetailsPerTemplate{{History: []policyv1.ComplianceHistory{{Message: "m"}}}}}

	obj, err := slimPolicies(stored)
	if err != nil {
		t.Fatal(err)
	}
	cached := obj.(*policyv1.Policy)
	if got, want := cached.Annotations[cachedDigestAnnotation], desired.Digest("c1", policyv1.Enforce); got != want {
		t.Errorf("cached digest %q, desired %q", got, want)
	}
	if cached.Spec.PolicyTemplates != nil || cached.Status.Details != nil || cached.ManagedFields != nil || len(cached.Annotations) != 1 {
		t.Errorf("cached replica keeps what the hub never reads: %+v", cached)
	}
	if cached.Spec.RemediationAction != policyv1.Enforce || cached.Status.ComplianceState != policyv1.NonCompliant ||
		cached.Status.ObservedGeneration != 3 || cached.Status.RolloutStatus != policyv1.RolloutFailed || cached.Generation != 3 ||
		cached.Labels[replication.LabelRootPolicy] != "policies.p" {
		t.Errorf("cached replica lost what the hub reads: %+v", cached)
	}
	again, _ := slimPolicies(cached)
	if again.(*policyv1.Policy).Annotations[cachedDigestAnnotation] != desired.Digest("c1", policyv1.Enforce) {
		t.Error("a second pass replaced the digest of the full replica")
	}

	// A replica with encrypted hub template values keeps its IV: the next
	// resolution reuses it, and the key rotation finds the replicas by it.
	encrypted := desired.Build("c2", policyv1.Enforce)
	encrypted.Annotations[templates.IVAnnotation] = "aXY="
	obj, _ = slimPolicies(encrypted)
	if got := obj.(*policyv1.Policy).Annotations; got[templates.IVAnnotation] != "aXY=" || len(got) != 2 {
		t.Errorf("cached annotations of an encrypted replica %v", got)
	}

	rootCopy := root.DeepCopy()
	obj, _ = slimPolicies(rootCopy)
	if len(obj.(*policyv1.Policy).Spec.PolicyTemplates) != 1 {
		t.Error("a root policy lost its templates")
	}
}
