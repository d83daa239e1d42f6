package spoke_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestChainAppliesInOrder walks a dependency chain A -> B -> C: B's
// template exists only while A is Compliant, C's only while B is, and the
// spoke's status (Pending with the unmet dependency named, then Compliant)
// reaches the hub replicas and the root policies.
func TestChainAppliesInOrder(t *testing.T) {
	const ns, data = "chain", "chain-data"
	configMap(t, data, "b")
	configMap(t, data, "c")
	testkit.Apply(t, hubC, policyOf(ns, "a", configPolicy("a-cm", "inform", "musthave", data, "a"), "")+"---"+
		policyOf(ns, "b", configPolicy("b-cm", "inform", "musthave", data, "b"), dependsOn("a", policyv1.Compliant))+"---"+
		policyOf(ns, "c", configPolicy("c-cm", "inform", "musthave", data, "c"), dependsOn("b", policyv1.Compliant)))
	bindToCluster(t, ns, "a", "b", "c")

	t.Run("B and C wait while A is NonCompliant", func(t *testing.T) {
		expectCompliance(t, ns, map[string]policyv1.ComplianceState{"a": policyv1.NonCompliant, "b": policyv1.Pending, "c": policyv1.Pending})
		testkit.Eventually(t, 45*time.Second, "pending messages name the unmet dependency", func() string {
			for name, want := range map[string]string{
				"b": "Pending; Dependencies were not satisfied: 1 is still pending (Policy chain.a)",
				"c": "Pending; Dependencies were not satisfied: 1 is still pending (Policy chain.b)",
			} {
				if got := newestMessage(spokePolicy(t, ns, name), 0); got != want {
					return fmt.Sprintf("%s: %q, want %q", name, got, want)
				}
			}
			return ""
		})
		for _, name := range []string{"b-cm", "c-cm"} {
			if spokeConfigPolicy(t, name) != nil {
				t.Errorf("template %s exists although its dependency is not met", name)
			}
		}
		if spokeConfigPolicy(t, "a-cm") == nil {
			t.Error("template a-cm, without dependencies, does not exist")
		}
		// An Event says B is Pending.
		events := &corev1.EventList{}
		if err := spokeC.List(context.Background(), events, client.InNamespace(cluster)); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == "chain.b" && e.Reason == "policy: cluster1/b-cm" && strings.HasPrefix(e.Message, "Pending; ")
		}) {
			t.Error("no Pending compliance event about chain.b")
		}
	})

	t.Run("A Compliant lets B, then C, apply", func(t *testing.T) {
		configMap(t, data, "a")
		expectCompliance(t, ns, map[string]policyv1.ComplianceState{"a": policyv1.Compliant, "b": policyv1.Compliant, "c": policyv1.Compliant})
		for _, name := range []string{"b-cm", "c-cm"} {
			cp := spokeConfigPolicy(t, name)
			if cp == nil {
				t.Fatalf("template %s does not exist", name)
			}
			if cp.Status.ComplianceState != policyv1.Compliant || cp.Status.LastEvaluatedGeneration != cp.Generation {
				t.Errorf("template %s status %+v", name, cp.Status)
			}
		}
		// B's history holds the wait and its end, newest first.
		b := spokePolicy(t, ns, "b")
		var msgs []string
		for _, h := range b.Status.Details[0].History {
			msgs = append(msgs, h.Message)
		}
		if len(msgs) < 2 || !strings.HasPrefix(msgs[0], "Compliant; notification - configmaps [b] found as specified in namespace chain-data") ||
			!slices.ContainsFunc(msgs[1:], func(m string) bool { return strings.HasPrefix(m, "Pending; ") }) {
			t.Errorf("history of chain.b: %q", msgs)
		}
	})

	t.Run("the status reaches the hub", func(t *testing.T) {
		testkit.Eventually(t, 45*time.Second, "hub replicas and root policies show the cluster's compliance", func() string {
			for _, name := range []string{"a", "b", "c"} {
				replica := hubReplica(t, ns, name)
				if replica == nil || replica.Status.ComplianceState != policyv1.Compliant {
					return name + ": replica not Compliant"
				}
				if replica.Status.ObservedGeneration != replica.Generation {
					return fmt.Sprintf("%s: replica observedGeneration %d, generation %d", name, replica.Status.ObservedGeneration, replica.Generation)
				}
				if len(replica.Status.Details) != 1 || len(replica.Status.Details[0].History) == 0 ||
					replica.Status.Details[0].TemplateMeta.Name != name+"-cm" {
					return fmt.Sprintf("%s: replica details %+v", name, replica.Status.Details)
				}
				root := &policyv1.Policy{}
				if err := hubC.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, root); err != nil {
					return err.Error()
				}
				if root.Status.ComplianceState != policyv1.Compliant || len(root.Status.Status) != 1 ||
					root.Status.Status[0].ClusterName != cluster || root.Status.Status[0].ComplianceState != policyv1.Compliant {
					return fmt.Sprintf("%s: root status %+v", name, root.Status)
				}
			}
			return ""
		})
		// The compliance events are copied to the hub, about the replica.
		events := &corev1.EventList{}
		if err := hubC.List(context.Background(), events, client.InNamespace(cluster)); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == "chain.a" && strings.HasPrefix(e.Message, "Compliant; ")
		}) {
			t.Error("no compliance event about chain.a on the hub")
		}
	})

	t.Run("A NonCompliant again removes B's and C's templates", func(t *testing.T) {
		deleteConfigMap(t, data, "a")
		expectCompliance(t, ns, map[string]policyv1.ComplianceState{"a": policyv1.NonCompliant, "b": policyv1.Pending, "c": policyv1.Pending})
		testkit.Eventually(t, 45*time.Second, "templates of B and C deleted", func() string {
			for _, name := range []string{"b-cm", "c-cm"} {
				if spokeConfigPolicy(t, name) != nil {
					return name + " still exists"
				}
			}
			return ""
		})
	})
}

// TestExtraDependenciesGateOneTemplate gives a policy three templates: the
// second waits (extraDependencies) for the first ConfigurationPolicy, the third
// for a missing one but with ignorePending.
func TestExtraDependenciesGateOneTemplate(t *testing.T) {
	const ns, data = "extra", "extra-data"
	configMap(t, data, "second")
	configMap(t, data, "third")
	testkit.Apply(t, hubC, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: x, namespace: %s}
spec:
  disabled: false
  policy-templates:
  - objectDefinition: %s
  - objectDefinition: %s
    extraDependencies:
    - {apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy, name: x-first, compliance: Compliant}
  - objectDefinition: %s
    ignorePending: true
    extraDependencies:
    - {apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy, name: nowhere, compliance: Compliant}
`, ns, configPolicy("x-first", "inform", "musthave", data, "first"),
		configPolicy("x-second", "inform", "musthave", data, "second"),
		configPolicy("x-third", "inform", "musthave", data, "third")))
	bindToCluster(t, ns, "x")

	details := func(p *policyv1.Policy) string {
		var out []string
		for _, d := range p.Status.Details {
			out = append(out, fmt.Sprintf("%s=%s", d.TemplateMeta.Name, d.ComplianceState))
		}
		return strings.Join(out, ",")
	}
	testkit.Eventually(t, 45*time.Second, "second template pending on the first", func() string {
		p := spokePolicy(t, ns, "x")
		if p == nil {
			return "not synced"
		}
		if got := details(p); got != "x-first=NonCompliant,x-second=Pending,x-third=Compliant" || p.Status.ComplianceState != policyv1.NonCompliant {
			return fmt.Sprintf("details %s, compliant %s", got, p.Status.ComplianceState)
		}
		if msg := newestMessage(p, 2); msg != "Compliant; Dependencies were not satisfied: 1 is still pending (ConfigurationPolicy nowhere) but ignorePending is true" {
			return "third: " + msg
		}
		return ""
	})
	for _, name := range []string{"x-second", "x-third"} {
		if spokeConfigPolicy(t, name) != nil {
			t.Errorf("%s exists although its extraDependencies are not met", name)
		}
	}

	configMap(t, data, "first")
	testkit.Eventually(t, 45*time.Second, "second template applied once the first is Compliant", func() string {
		p := spokePolicy(t, ns, "x")
		if got := details(p); got != "x-first=Compliant,x-second=Compliant,x-third=Compliant" || p.Status.ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("details %s, compliant %s", got, p.Status.ComplianceState)
		}
		return ""
	})
	if spokeConfigPolicy(t, "x-third") != nil {
		t.Error("x-third exists although its dependency does not")
	}
}

// TestPolicySetDependency makes a policy wait for a PolicySet: the hub turns the
// dependency into one on each member, and the spoke waits for all of them.
func TestPolicySetDependency(t *testing.T) {
	const ns, data = "sets", "sets-data"
	configMap(t, data, "m1")
	configMap(t, data, "d")
	testkit.Apply(t, hubC, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: base, namespace: %s}
spec:
  policies: [m1, m2]
`, ns))
	testkit.Apply(t, hubC, policyOf(ns, "m1", configPolicy("m1-cm", "inform", "musthave", data, "m1"), "")+"---"+
		policyOf(ns, "m2", configPolicy("m2-cm", "inform", "musthave", data, "m2"), "")+"---"+
		policyOf(ns, "d", configPolicy("d-cm", "inform", "musthave", data, "d"),
			"[{apiVersion: policy.open-cluster-management.io/v1beta1, kind: PolicySet, name: base, compliance: Compliant}]"))
	bindToCluster(t, ns, "m1", "m2", "d")

	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"m1": policyv1.Compliant, "m2": policyv1.NonCompliant, "d": policyv1.Pending})
	d := spokePolicy(t, ns, "d")
	var deps []string
	for _, dep := range d.Spec.Dependencies {
		deps = append(deps, dep.Kind+" "+dep.Name)
	}
	if strings.Join(deps, ",") != "Policy sets.m1,Policy sets.m2" {
		t.Errorf("dependencies on the spoke %v, want the set's members", deps)
	}
	testkit.Eventually(t, 45*time.Second, "d waits for the member that is not Compliant", func() string {
		want := "Pending; Dependencies were not satisfied: 1 is still pending (Policy sets.m2)"
		if got := newestMessage(spokePolicy(t, ns, "d"), 0); got != want {
			return fmt.Sprintf("newest message %q", got)
		}
		return ""
	})
	if spokeConfigPolicy(t, "d-cm") != nil {
		t.Error("d-cm exists while the set is not Compliant")
	}

	configMap(t, data, "m2")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"m2": policyv1.Compliant, "d": policyv1.Compliant})
	if spokeConfigPolicy(t, "d-cm") == nil {
		t.Error("d-cm does not exist once the set is Compliant")
	}
}

// TestCycleStaysPendingAndIsNamed makes two policies wait for each other: both
// stay Pending, their templates are never created, and the message names the
// whole cycle.
func TestCycleStaysPendingAndIsNamed(t *testing.T) {
	const ns, data = "cycle", "cycle-data"
	configMap(t, data, "p1")
	configMap(t, data, "p2")
	testkit.Apply(t, hubC, policyOf(ns, "p1", configPolicy("p1-cm", "inform", "musthave", data, "p1"), dependsOn("p2", policyv1.Compliant))+"---"+
		policyOf(ns, "p2", configPolicy("p2-cm", "inform", "musthave", data, "p2"), dependsOn("p1", policyv1.Compliant)))
	bindToCluster(t, ns, "p1", "p2")

	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p1": policyv1.Pending, "p2": policyv1.Pending})
	testkit.Eventually(t, 45*time.Second, "the cycle is named", func() string {
		for name, want := range map[string]string{
			"p1": "the dependencies form a cycle: Policy cycle.p1 -> ConfigurationPolicy p1-cm -> Policy cycle.p2 -> ConfigurationPolicy p2-cm -> Policy cycle.p1",
			"p2": "the dependencies form a cycle: Policy cycle.p2 -> ConfigurationPolicy p2-cm -> Policy cycle.p1 -> ConfigurationPolicy p1-cm -> Policy cycle.p2",
		} {
			if got := newestMessage(spokePolicy(t, ns, name), 0); !strings.HasSuffix(got, want) {
				return fmt.Sprintf("%s: %q", name, got)
			}
		}
		return ""
	})
	for _, name := range []string{"p1-cm", "p2-cm"} {
		if spokeConfigPolicy(t, name) != nil {
			t.Errorf("%s exists although its policy is on a cycle", name)
		}
	}
}

// TestDependenciesWithoutAPIVersionGate gates a policy and a template on
// dependencies written without apiVersion (a spelling fleetpolicy accepts on
// the policy group's kinds) exactly like the OCM spelling.
func TestDependenciesWithoutAPIVersionGate(t *testing.T) {
	const ns, data = "noapiversion", "noapiversion-data"
	configMap(t, data, "kind-gated")
	configMap(t, data, "kind-gated2")
	withExtra := policyOf(ns, "kind-gated", configPolicy("kind-gated-cm", "inform", "musthave", data, "kind-gated"),
		"[{kind: Policy, name: kind-first, compliance: Compliant}]") +
		"  - objectDefinition: " + configPolicy("kind-gated2-cm", "inform", "musthave", data, "kind-gated2") + "\n" +
		"    extraDependencies: [{kind: ConfigurationPolicy, name: kind-first-cm, compliance: Compliant}]\n"
	testkit.Apply(t, hubC, policyOf(ns, "kind-first", configPolicy("kind-first-cm", "inform", "musthave", data, "kind-first"), "")+"---"+withExtra)
	bindToCluster(t, ns, "kind-first", "kind-gated")

	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"kind-first": policyv1.NonCompliant, "kind-gated": policyv1.Pending})
	for _, name := range []string{"kind-gated-cm", "kind-gated2-cm"} {
		if spokeConfigPolicy(t, name) != nil {
			t.Errorf("template %s exists although its dependency without apiVersion is not met", name)
		}
	}
	configMap(t, data, "kind-first")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"kind-first": policyv1.Compliant, "kind-gated": policyv1.Compliant})
	if spokeConfigPolicy(t, "kind-gated2-cm") == nil {
		t.Error("template kind-gated2-cm was not applied once its dependency was met")
	}
}
