package hub

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// TestSlimPolicies: a cached replica keeps what the hub reads (its root-policy
// label, action, compliance and the generation it was evaluated at) and the
// digest of the full replica, which equals the desired replica's; the replicas
// of a root share one labels map; a second pass keeps the digest; a root
// policy keeps its spec and labels.
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
	if len(cached.Labels) != 1 {
		t.Errorf("cached replica keeps labels the hub never reads: %v", cached.Labels)
	}
	other, _ := slimPolicies(desired.Build("c3", policyv1.Enforce))
	if reflect.ValueOf(other.(*policyv1.Policy).Labels).UnsafePointer() != reflect.ValueOf(cached.Labels).UnsafePointer() {
		t.Error("two replicas of a root hold a labels map each")
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
	rootCopy.Labels = map[string]string{"team": "a", replication.LabelRootPolicy: "not-a-root-name"}
	obj, _ = slimPolicies(rootCopy)
	if got := obj.(*policyv1.Policy); len(got.Spec.PolicyTemplates) != 1 || len(got.Labels) != 2 {
		t.Errorf("a root policy lost its templates or labels: %+v", got)
	}
}

// TestRootLabelsIsBounded: past maxRootLabels roots the shared maps start
// again, and each still names its root.
func TestRootLabelsIsBounded(t *testing.T) {
	r := &rootLabels{maps: map[string]map[string]string{}}
	first := r.of("ns.root-0")
	for i := range maxRootLabels {
		r.of(fmt.Sprintf("ns.root-%d", i))
	}
	if len(r.maps) != maxRootLabels {
		t.Fatalf("%d roots remembered, want %d", len(r.maps), maxRootLabels)
	}
	r.of("ns.one-more")
	if len(r.maps) != 1 {
		t.Fatalf("%d roots remembered past the bound, want 1", len(r.maps))
	}
	again := r.of("ns.root-0")
	if reflect.ValueOf(again).UnsafePointer() == reflect.ValueOf(first).UnsafePointer() ||
		!maps.Equal(again, map[string]string{replication.LabelRootPolicy: "ns.root-0"}) || first[replication.LabelRootPolicy] != "ns.root-0" {
		t.Errorf("after the bound: %v (first %v)", again, first)
	}
}
