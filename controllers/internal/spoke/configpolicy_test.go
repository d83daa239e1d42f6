package spoke_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestEnforceCreatesThenMustNotHaveDeletes enforces a policy whose template
// says inform: the policy's remediationAction wins, so the ConfigMap is created;
// changing the root policy to mustnothave deletes it. Each time the hub replica
// reports the generation it was evaluated for.
func TestEnforceCreatesThenMustNotHaveDeletes(t *testing.T) {
	const ns, data = "enforce", "enforce-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	root := func(complianceType string) string {
		return strings.Replace(policyOf(ns, "e", configPolicy("e-cm", "inform", complianceType, data, "made"), ""),
			"disabled: false", "disabled: false\n  remediationAction: enforce", 1)
	}
	testkit.Apply(t, hubC, root("musthave"))
	bindToCluster(t, ns, "e")
	made := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "made"}}

	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"e": policyv1.Compliant})
	if !exists(t, spokeC, made) || made.Data["owner"] != "fleetpolicy" {
		t.Fatalf("enforce did not create the ConfigMap: %+v", made)
	}
	if cp := spokeConfigPolicy(t, "e-cm"); cp == nil || !cp.Spec.RemediationAction.IsEnforce() {
		t.Fatalf("the template does not carry the policy's remediationAction: %+v", cp)
	}
	expectCurrentOnHub(t, ns, "e", "was created successfully")
	first := hubReplica(t, ns, "e").Generation

	testkit.Apply(t, hubC, root("mustnothave"))
	testkit.Eventually(t, 45*time.Second, "mustnothave deletes the ConfigMap", func() string {
		if exists(t, spokeC, made) {
			return "the ConfigMap still exists"
		}
		return ""
	})
	expectCurrentOnHub(t, ns, "e", "was deleted successfully")
	if second := hubReplica(t, ns, "e").Generation; second <= first {
		t.Errorf("the replica's generation did not move: %d then %d", first, second)
	}
}

// expectCurrentOnHub waits until the hub replica of ns/name is Compliant for
// its current generation, with a history entry containing message.
func expectCurrentOnHub(t *testing.T, ns, name, message string) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, "hub replica evaluated at its generation", func() string {
		r := hubReplica(t, ns, name)
		if r == nil {
			return "no replica"
		}
		if r.Status.ComplianceState != policyv1.Compliant || r.Status.ObservedGeneration != r.Generation {
			return fmt.Sprintf("compliant %q, observedGeneration %d, generation %d", r.Status.ComplianceState, r.Status.ObservedGeneration, r.Generation)
		}
		for _, d := range r.Status.Details {
			for _, h := range d.History {
				if strings.Contains(h.Message, message) {
					return ""
				}
			}
		}
		return fmt.Sprintf("no history entry with %q: %+v", message, r.Status.Details)
	})
}

// TestNamespaceSelector checks a ConfigMap in the namespaces a glob selects,
// without the excluded one.
func TestNamespaceSelector(t *testing.T) {
	const ns = "selector"
	for _, n := range []string{"sel-a", "sel-b", "sel-skip"} {
		if err := localplane.EnsureNamespace(context.Background(), spokeC, n); err != nil {
			t.Fatal(err)
		}
	}
	configMap(t, "sel-a", "shared")
	testkit.Apply(t, hubC, policyOf(ns, "s", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: s-cm},
        spec: {remediationAction: inform, namespaceSelector: {include: ["sel-*"], exclude: [sel-skip]},
          object-templates: [{complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: shared}}}]}}`, ""))
	bindToCluster(t, ns, "s")

	testkit.Eventually(t, 45*time.Second, "missing in sel-b only", func() string {
		want := "NonCompliant; violation - configmaps [shared] not found in namespace sel-b" // as OCM: only the violation
		if got := newestMessage(spokePolicy(t, ns, "s"), 0); got != want {
			return fmt.Sprintf("newest message %q", got)
		}
		return ""
	})
	cp := spokeConfigPolicy(t, "s-cm")
	if cp == nil || len(cp.Status.RelatedObjects) != 2 || cp.Status.RelatedObjects[1].Compliant != "NonCompliant" {
		t.Errorf("related objects %+v", cp)
	}
	configMap(t, "sel-b", "shared")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"s": policyv1.Compliant})
}

// TestNamespaceSelectorSelectingNothing: a namespaced object template
// without a namespace whose namespaceSelector selects no namespace is a
// violation in OCM's words, for an unnamed and a named object alike (never
// Compliant, never a message naming no object); the templates' messages in
// their order.
func TestNamespaceSelectorSelectingNothing(t *testing.T) {
	const ns = "selector-none"
	testkit.Apply(t, hubC, policyOf(ns, "nothing", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: n-cm},
        spec: {remediationAction: inform, namespaceSelector: {include: ["no-such-namespace-*"]},
          object-templates: [
            {complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {k: v}}},
            {complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}}}]}}`, ""))
	bindToCluster(t, ns, "nothing")

	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"nothing": policyv1.NonCompliant})
	want := "NonCompliant; violation - " +
		"namespaced object of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata; " +
		"namespaced object settings of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata"
	testkit.Eventually(t, 45*time.Second, "OCM's message", func() string {
		if got := newestMessage(spokePolicy(t, ns, "nothing"), 0); got != want {
			return fmt.Sprintf("newest message %q", got)
		}
		return ""
	})
	cp := spokeConfigPolicy(t, "n-cm")
	if cp == nil || len(cp.Status.CompliancyDetails) != 2 || len(cp.Status.RelatedObjects) != 0 {
		t.Fatalf("status %+v", cp)
	}
	for i, d := range cp.Status.CompliancyDetails {
		if d.ComplianceState != policyv1.NonCompliant || len(d.Conditions) != 1 || d.Conditions[0].Type != "violation" {
			t.Errorf("compliancyDetails[%d] %+v", i, d)
		}
	}
}

// TestUnnamedObjectMessages: an object template without a name is worded as
// OCM words it: no name when nothing matches, and the objects it matched in
// a namespace named together, sorted.
func TestUnnamedObjectMessages(t *testing.T) {
	const ns, data = "unnamed-msg", "unnamed-msg-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: unnamed-msg-cm},
        spec: {remediationAction: inform,
          object-templates: [{complianceType: musthave,
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: unnamed-msg-data}, data: {owner: fleetpolicy}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	expectMessage(t, ns, "NonCompliant; violation - configmaps not found in namespace unnamed-msg-data")
	configMap(t, data, "zz")
	configMap(t, data, "aa")
	expectMessage(t, ns, "Compliant; notification - configmaps [aa, zz] found as specified in namespace unnamed-msg-data")
}

// TestSpecSyncMirrorsAndRemoves checks that the spoke's copy follows the hub
// replica, reverts a local change, and goes with its templates when the
// replica goes.
func TestSpecSyncMirrorsAndRemoves(t *testing.T) {
	const ns, data = "specsync", "specsync-data"
	configMap(t, data, "m")
	testkit.Apply(t, hubC, strings.Replace(policyOf(ns, "m", configPolicy("m-cm", "inform", "musthave", data, "m"), ""),
		"metadata: {name: m, namespace: specsync}", "metadata: {name: m, namespace: specsync, labels: {team: blue}}", 1))
	bindToCluster(t, ns, "m")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"m": policyv1.Compliant})

	copied, replica := spokePolicy(t, ns, "m"), hubReplica(t, ns, "m")
	if copied.Labels["team"] != "blue" || copied.Annotations["fleetpolicy.io/hub-generation"] != fmt.Sprint(replica.Generation) {
		t.Errorf("copy metadata: labels %v, annotations %v", copied.Labels, copied.Annotations)
	}
	if copied.Spec.RemediationAction != replica.Spec.RemediationAction || len(copied.Spec.PolicyTemplates) != 1 {
		t.Errorf("copy spec %+v, replica spec %+v", copied.Spec, replica.Spec)
	}

	// A change made on the managed cluster is reverted.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := spokePolicy(t, ns, "m")
		p.Spec.Disabled = true
		return spokeC.Update(context.Background(), p)
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "local change reverted", func() string {
		if p := spokePolicy(t, ns, "m"); p == nil || p.Spec.Disabled {
			return "still disabled"
		}
		return ""
	})

	// Deleting the root policy on the hub removes the replica, the copy and its template.
	if err := hubC.Delete(context.Background(), &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "copy and template removed", func() string {
		switch {
		case hubReplica(t, ns, "m") != nil:
			return "replica still on the hub"
		case spokePolicy(t, ns, "m") != nil:
			return "copy still on the spoke"
		case spokeConfigPolicy(t, "m-cm") != nil:
			return "template still on the spoke"
		}
		return ""
	})
}

// TestBadTemplatesAreReported gives a policy a template of a kind that is not
// a template kind and one of a kind not installed: both are template errors
// naming the field, and the policy is NonCompliant.
func TestBadTemplatesAreReported(t *testing.T) {
	const ns = "badinput"
	testkit.Apply(t, hubC, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: bad, namespace: %s}
spec:
  disabled: false
  policy-templates:
  - objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: not-a-template}}
  - objectDefinition: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}
`, ns))
	bindToCluster(t, ns, "bad")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"bad": policyv1.NonCompliant})
	testkit.Eventually(t, 45*time.Second, "template errors name the field", func() string {
		p := spokePolicy(t, ns, "bad")
		for i, want := range []string{
			"template-error; spec.policy-templates[0].objectDefinition: ConfigMap is not a policy template kind (its CRD lacks the label policy.open-cluster-management.io/policy-type=template)",
			"template-error; spec.policy-templates[1].objectDefinition: the kind Widget of example.com/v1 is not installed on the cluster",
		} {
			if got := newestMessage(p, i); got != want {
				return fmt.Sprintf("template %d: %q", i, got)
			}
		}
		return ""
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "not-a-template"}}
	if exists(t, spokeC, cm) {
		t.Error("a ConfigMap was created as a template")
	}
	// The hub replica says the same.
	testkit.Eventually(t, 45*time.Second, "hub replica NonCompliant", func() string {
		r := hubReplica(t, ns, "bad")
		if r == nil || r.Status.ComplianceState != policyv1.NonCompliant || len(r.Status.Details) != 2 {
			return fmt.Sprintf("%+v", r)
		}
		return ""
	})
}

// TestUnnamedMustNotHaveIsNotEnforced: as OCM's config-policy-controller
// ("we do not support enforce on unnamed templates"), an enforced mustnothave
// template without a name reports the objects it matches and deletes none.
func TestUnnamedMustNotHaveIsNotEnforced(t *testing.T) {
	const ns, data = "unnamed-mnh", "unnamed-mnh-data"
	configMap(t, data, "kept")
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: unnamed-mnh-cm},
        spec: {remediationAction: enforce,
          object-templates: [{complianceType: mustnothave,
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: unnamed-mnh-data}, data: {owner: fleetpolicy}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.NonCompliant})
	cp := spokeConfigPolicy(t, "unnamed-mnh-cm")
	if cp == nil || !strings.EqualFold(string(cp.Spec.RemediationAction), string(policyv1.Enforce)) {
		t.Fatalf("the policy is not enforced: %+v", cp)
	}
	time.Sleep(2 * time.Second) // a few more evaluations
	if kept := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "kept"}}); !exists(t, spokeC, kept) {
		t.Fatal("an unnamed mustnothave template deleted the object it matched")
	}
}
