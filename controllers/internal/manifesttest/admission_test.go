package manifesttest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestRootPolicyNameLengthRefusedAtAdmission applies manifests/hub to a real
// API server (no hub running: the rule holds without it) and holds its
// ValidatingAdmissionPolicy to replication.ValidateRootName: a root Policy is
// created exactly when the rule accepts its namespace and name, with OCM's
// message otherwise; replicas are exempt, as in OCM.
func TestRootPolicyNameLengthRefusedAtAdmission(t *testing.T) {
	ctx := context.Background()
	c := startWithHubManifests(t).Client
	const ns = "name-length" // 11 characters
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	policy := func(namespace, name string, labels map[string]string) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
			Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	}
	// The API server loads the policy asynchronously: wait until it refuses.
	probe := strings.Repeat("x", 60)
	testkit.Eventually(t, 30*time.Second, "the admission policy to take effect", func() string {
		if err := c.Create(ctx, policy(ns, probe, nil)); err == nil {
			_ = c.Delete(ctx, policy(ns, probe, nil))
			return "a 71-character namespace and name was stored"
		}
		return ""
	})

	for _, n := range []int{1, 50, 51, 52, 63 - len(ns)} {
		name := strings.Repeat("p", n)
		want := replication.ValidateRootName(ns, name)
		err := c.Create(ctx, policy(ns, name, nil))
		switch {
		case want == nil && err != nil:
			t.Errorf("%d+%d characters: the rule accepts it, the API server refused it: %v", len(ns), n, err)
		case want != nil && err == nil:
			t.Errorf("%d+%d characters: the rule refuses it, the API server stored it", len(ns), n)
		case want != nil && !strings.Contains(err.Error(), "the combined length of the policy namespace and name cannot exceed 62 characters"):
			t.Errorf("%d+%d characters: the refusal does not say OCM's limit: %v", len(ns), n, err)
		}
	}
	// A replica's own namespace and name may be longer: it carries the label.
	replicaName := replication.Name(ns, strings.Repeat("p", 51))
	if err := localplane.EnsureNamespace(ctx, c, "cluster-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, policy("cluster-1", replicaName, map[string]string{replication.LabelRootPolicy: replicaName})); err != nil {
		t.Errorf("a replica was refused: %v", err)
	}
}

// TestPolicySetExclusionsRefusedAtAdmission applies manifests/hub to a real API
// server (no hub running) and checks OCM's PolicySet webhook rules on
// spec.exclusions, with its messages: an exclusion must name a policy of
// spec.policies (the ValidatingAdmissionPolicy), on create and on update, and
// may name it once (the CRD); what the API server refuses, the shared rule
// plan-rollout applies (binding.ValidateExclusions) refuses too.
func TestPolicySetExclusionsRefusedAtAdmission(t *testing.T) {
	ctx := context.Background()
	c := startWithHubManifests(t).Client
	const ns = "policyset-exclusions"
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	set := func(name string, policies []string, exclusions ...policyv1beta1.PolicySetExclusion) *policyv1beta1.PolicySet {
		s := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: policyv1beta1.PolicySetSpec{Exclusions: exclusions}}
		for _, p := range policies {
			s.Spec.Policies = append(s.Spec.Policies, policyv1.NonEmptyString(p))
		}
		return s
	}
	exclude := func(policy string) policyv1beta1.PolicySetExclusion {
		return policyv1beta1.PolicySetExclusion{PolicyName: policy, ClusterNames: []policyv1.NonEmptyString{"managed1"}}
	}
	// The API server loads the policy asynchronously: wait until it refuses.
	testkit.Eventually(t, 30*time.Second, "the admission policy to take effect", func() string {
		probe := set("probe", []string{"a"}, exclude("unknown-policy"))
		if err := c.Create(ctx, probe); err == nil {
			_ = c.Delete(ctx, probe)
			return "an exclusion of a policy not in the set was stored"
		}
		return ""
	})

	valid := set("valid", []string{"a", "b"}, exclude("b"))
	if errs := binding.ValidateExclusions(valid); len(errs) > 0 {
		t.Fatalf("the shared rule refuses the valid set: %v", errs)
	}
	if err := c.Create(ctx, valid); err != nil {
		t.Fatalf("a valid exclusion was refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		set  *policyv1beta1.PolicySet
		want string
	}{
		{"not in the set", set("unknown", []string{"a", "b"}, exclude("a"), exclude("unknown-policy"), exclude("other")),
			"policy in spec.exclusions is not listed in spec.policies: unknown-policy, other"},
		{"twice", set("twice", []string{"a"}, exclude("a"), exclude("a")),
			`spec.exclusions[1]: Duplicate value: {"policyName":"a"}`},
	} {
		if len(binding.ValidateExclusions(tc.set)) == 0 {
			t.Errorf("%s: the shared rule (binding.ValidateExclusions) accepts it", tc.name)
		}
		err := c.Create(ctx, tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
	// Removing a policy from the set while its exclusion stays is refused too.
	valid.Spec.Policies = []policyv1.NonEmptyString{"a"}
	if err := c.Update(ctx, valid); err == nil ||
		!strings.Contains(err.Error(), "policy in spec.exclusions is not listed in spec.policies: b") {
		t.Errorf("update dropping an excluded policy: got %v, want OCM's refusal", err)
	}
}

// TestPlacementWebhookBlastRadius checks the namespaceSelector of the rendered
// placement webhook: it leaves out the namespace the hub's Deployment runs in,
// every namespace labelled as a managed cluster's (OCM's registration label)
// and namespaces labelled exempt, and governs any other namespace.
func TestPlacementWebhookBlastRadius(t *testing.T) {
	objs, err := localplane.ReadManifests("manifests/hub", bytes.NewReader(kustomizeBuild(t, "manifests/hub")))
	if err != nil {
		t.Fatal(err)
	}
	var hubNamespace string
	var webhooks []admissionregistrationv1.MutatingWebhook
	for _, o := range objs {
		switch {
		case o.GetKind() == "Deployment" && o.GetName() == "fleetpolicy-hub":
			hubNamespace = o.GetNamespace()
		case o.GetKind() == "MutatingWebhookConfiguration":
			cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cfg); err != nil {
				t.Fatal(err)
			}
			webhooks = append(webhooks, cfg.Webhooks...)
		}
	}
	if hubNamespace == "" || len(webhooks) == 0 {
		t.Fatalf("hub namespace %q, %d webhooks", hubNamespace, len(webhooks))
	}
	namespaces := []struct {
		labels   map[string]string
		governed bool
	}{
		{map[string]string{corev1.LabelMetadataName: hubNamespace}, false},
		{map[string]string{corev1.LabelMetadataName: "cluster-1", clusterv1.ClusterNameLabelKey: "cluster-1"}, false},
		{map[string]string{corev1.LabelMetadataName: "team-a", "placement.fleetpolicy.io/webhook": "exempt"}, false},
		{map[string]string{corev1.LabelMetadataName: "team-a"}, true},
		{map[string]string{corev1.LabelMetadataName: "kube-system"}, true},
	}
	for _, w := range webhooks {
		if w.NamespaceSelector == nil {
			t.Fatalf("webhook %s has no namespaceSelector: a hub that is down blocks every namespace", w.Name)
		}
		selector, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range namespaces {
			if got := selector.Matches(labels.Set(ns.labels)); got != ns.governed {
				t.Errorf("webhook %s: namespace %v governed %v, want %v", w.Name, ns.labels, got, ns.governed)
			}
		}
	}
}
