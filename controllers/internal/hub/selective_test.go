package hub_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

func logrDiscard() logr.Logger { return logr.Discard() }

// TestSelectiveEnforcementExamplesLive applies the five selective-enforcement
// examples (examples/api/selective-enforcement.yaml) and checks the replicas
// the hub writes. In Example 2 an override enforces only the clusters its own
// binding selects (see shared/binding): C and D stay inform.
func TestSelectiveEnforcementExamplesLive(t *testing.T) {
	testkit.ApplyFile(t, c, "examples/api/managedclusters.yaml")
	testkit.ApplyFile(t, c, "examples/api/selective-enforcement.yaml")
	abcd := clusters[:4]
	all := clusters
	for _, tc := range []struct {
		example         int
		bound, enforced []string
	}{
		{1, abcd, []string{"cluster-a", "cluster-b"}},
		{2, all, []string{"cluster-a", "cluster-b", "cluster-e", "cluster-f"}},
		{3, abcd, []string{"cluster-a", "cluster-b"}},
		{4, all, []string{"cluster-a", "cluster-b", "cluster-e", "cluster-f"}},
		{5, abcd, nil},
	} {
		ns := fmt.Sprintf("selective-example-%d", tc.example)
		t.Run(ns, func(t *testing.T) {
			expectReplicas(t, ns, "test-policy-1", want(tc.bound, tc.enforced))
			testkit.Eventually(t, 20*time.Second, "root status lists exactly the bound clusters", func() string {
				if got := statusClusters(testkit.RootStatus(t, c, ns, "test-policy-1")); !slices.Equal(got, tc.bound) {
					return fmt.Sprintf("status clusters %v, want %v", got, tc.bound)
				}
				return ""
			})
		})
	}
}

// binding returns a PlacementBinding of policy p to PlacementRule rule.
func bindingYAML(ns, name, rule, policy, extra string) string {
	return placementBindingYAML(ns, name, "apps.open-cluster-management.io", "PlacementRule", rule, "Policy", policy) + extra + "\n"
}

// placementBindingYAML binds the Policy or PolicySet (subjectKind) named
// subject to a Placement or PlacementRule (kind, of API group group).
func placementBindingYAML(ns, name, group, kind, placement, subjectKind, subject string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: %s, namespace: %s}
placementRef: {apiGroup: %s, kind: %s, name: %s}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: %s, name: %s}]
`, name, ns, group, kind, placement, subjectKind, subject)
}

func ruleYAML(ns, name string, selected ...string) string {
	decisions := ""
	for _, cl := range selected {
		decisions += fmt.Sprintf("\n  - {clusterName: %s, clusterNamespace: %s}", cl, cl)
	}
	if decisions == "" {
		decisions = " []"
	}
	return fmt.Sprintf(`
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: %s, namespace: %s}
spec: {schedulerName: test-writes-decisions}
status:
  decisions:%s
`, name, ns, decisions)
}

func policyYAML(ns, name, action string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %s, namespace: %s, labels: {team: platform}}
spec:
  disabled: false
  remediationAction: %s
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %s-cm}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: default}}
`, name, ns, action, name)
}

func setDecisions(t *testing.T, ns, rule string, selected ...string) {
	t.Helper()
	testkit.Apply(t, c, ruleYAML(ns, rule, selected...))
}

// TestEdgeCasesLive walks the edge cases of reference/propagator.md §2.3 on a
// live hub, one change at a time, as OCM's e2e case16 does.
func TestEdgeCasesLive(t *testing.T) {
	ns := "edge-cases"
	ctx := context.Background()
	testkit.Apply(t, c, policyYAML(ns, "p", "inform"))
	testkit.Apply(t, c, ruleYAML(ns, "base", "cluster-a", "cluster-b"))
	testkit.Apply(t, c, ruleYAML(ns, "enf", "cluster-b", "cluster-c"))
	testkit.Apply(t, c, bindingYAML(ns, "base-pb", "base", "p", ""))
	testkit.Apply(t, c, bindingYAML(ns, "enf-pb", "enf", "p", "bindingOverrides: {remediationAction: Enforce}\nsubFilter: restricted"))

	t.Run("restricted binding enforces only bound clusters and never adds one", func(t *testing.T) {
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, []string{"cluster-b"}))
		testkit.Eventually(t, 20*time.Second, "restricted-only cluster-c absent from root status", func() string {
			s := testkit.RootStatus(t, c, ns, "p")
			if got := statusClusters(s); !slices.Equal(got, []string{"cluster-a", "cluster-b"}) {
				return fmt.Sprintf("status clusters %v", got)
			}
			if len(s.Placement) != 2 {
				return fmt.Sprintf("placement %d entries, want base-pb and the overlapping enf-pb", len(s.Placement))
			}
			return ""
		})
	})
	t.Run("cluster removed from the enforce placement goes back to inform", func(t *testing.T) {
		setDecisions(t, ns, "enf", "cluster-c")
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, nil))
		testkit.Eventually(t, 20*time.Second, "non-overlapping restricted binding leaves placement[]", func() string {
			if n := len(testkit.RootStatus(t, c, ns, "p").Placement); n != 1 {
				return fmt.Sprintf("placement has %d entries, want 1", n)
			}
			return ""
		})
		setDecisions(t, ns, "enf", "cluster-b", "cluster-c")
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, []string{"cluster-b"}))
	})
	t.Run("cluster removed from the base placement loses its replica", func(t *testing.T) {
		setDecisions(t, ns, "base", "cluster-a")
		expectReplicas(t, ns, "p", want([]string{"cluster-a"}, nil))
		setDecisions(t, ns, "base", "cluster-a", "cluster-b")
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, []string{"cluster-b"}))
	})
	t.Run("removing subFilter makes the binding add its clusters, enforced", func(t *testing.T) {
		pb := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enf-pb"}}
		get(t, pb)
		pb.SubFilter = ""
		if err := c.Update(ctx, pb); err != nil {
			t.Fatal(err)
		}
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b", "cluster-c"}, []string{"cluster-b", "cluster-c"}))
	})
	t.Run("removing bindingOverrides sets every replica back to inform", func(t *testing.T) {
		pb := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enf-pb"}}
		get(t, pb)
		pb.BindingOverrides = policyv1.BindingOverrides{}
		if err := c.Update(ctx, pb); err != nil {
			t.Fatal(err)
		}
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b", "cluster-c"}, nil))
	})
	t.Run("a missing PlacementRule selects nothing", func(t *testing.T) {
		if err := c.Delete(ctx, &appsv1.PlacementRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enf"}}); err != nil {
			t.Fatal(err)
		}
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, nil))
	})
	t.Run("a disabled root has no replicas but still lists its bindings", func(t *testing.T) {
		// The hub writes the root's status meanwhile: a stale
		// resourceVersion is tried again, as a user's client would.
		setDisabled := func(disabled bool) {
			t.Helper()
			if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
				get(t, p)
				p.Spec.Disabled = disabled
				return c.Update(ctx, p)
			}); err != nil {
				t.Fatal(err)
			}
		}
		setDisabled(true)
		expectReplicas(t, ns, "p", map[string]string{})
		testkit.Eventually(t, 20*time.Second, "placement still listed", func() string {
			if s := testkit.RootStatus(t, c, ns, "p"); len(s.Placement) == 0 || len(s.Status) != 0 {
				return fmt.Sprintf("placement %d, status %d", len(s.Placement), len(s.Status))
			}
			return ""
		})
		setDisabled(false)
		expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, nil))
	})
	t.Run("a deleted root loses every replica", func(t *testing.T) {
		if err := c.Delete(ctx, &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}); err != nil {
			t.Fatal(err)
		}
		expectReplicas(t, ns, "p", map[string]string{})
	})
}

// TestReplicaDriftReverted edits a replica as someone else would and expects
// the hub to put it back, while status written by the spoke stays.
func TestReplicaDriftReverted(t *testing.T) {
	ns := "drift"
	ctx := context.Background()
	testkit.Apply(t, c, policyYAML(ns, "p", "inform"))
	testkit.Apply(t, c, ruleYAML(ns, "r", "cluster-a"))
	testkit.Apply(t, c, bindingYAML(ns, "pb", "r", "p", ""))
	expectReplicas(t, ns, "p", want([]string{"cluster-a"}, nil))

	replica := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: replication.Name(ns, "p")}}
	get(t, replica)
	if replica.Labels["team"] != "platform" || replica.Labels[replication.LabelRootPolicy] != "drift.p" {
		t.Fatalf("replica labels %v", replica.Labels)
	}
	replica.Spec.RemediationAction = "enforce"
	replica.Spec.PolicyTemplates[0].IgnorePending = true
	delete(replica.Labels, "team")
	if err := c.Update(ctx, replica); err != nil {
		t.Fatal(err)
	}
	expectReplicas(t, ns, "p", want([]string{"cluster-a"}, nil))
	testkit.Eventually(t, 20*time.Second, "templates and labels restored", func() string {
		get(t, replica)
		if replica.Spec.PolicyTemplates[0].IgnorePending || replica.Labels["team"] != "platform" {
			return fmt.Sprintf("template %+v, labels %v", replica.Spec.PolicyTemplates[0], replica.Labels)
		}
		return ""
	})

	// The spoke's status is not drift: it stays and reaches the root.
	replica.Status.ComplianceState = policyv1.NonCompliant
	if err := c.Status().Update(ctx, replica); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "root compliance from the replica", func() string {
		s := testkit.RootStatus(t, c, ns, "p")
		if s.ComplianceState != policyv1.NonCompliant || len(s.Status) != 1 || s.Status[0].ComplianceState != policyv1.NonCompliant {
			return fmt.Sprintf("root status %+v", s)
		}
		return ""
	})
	get(t, replica)
	if replica.Status.ComplianceState != policyv1.NonCompliant {
		t.Fatalf("hub overwrote the replica status: %q", replica.Status.ComplianceState)
	}
}

// TestPolicySetBindingAndStatus binds two policies through a PolicySet and a
// Placement's PlacementDecisions, and checks replicas and the set's status.
func TestPolicySetBindingAndStatus(t *testing.T) {
	ns := "policyset"
	ctx := context.Background()
	testkit.Apply(t, c, policyYAML(ns, "p1", "inform"))
	testkit.Apply(t, c, policyYAML(ns, "p2", "enforce"))
	testkit.Apply(t, c, `
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: set, namespace: policyset}
spec: {policies: [p1, p2]}
---
`+decidedPlacement(ns, "cluster-d", "cluster-e")+`
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: set-pb, namespace: policyset}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: PolicySet, name: set}]
`)
	expectReplicas(t, ns, "p1", want([]string{"cluster-d", "cluster-e"}, nil))
	expectReplicas(t, ns, "p2", want([]string{"cluster-d", "cluster-e"}, []string{"cluster-d", "cluster-e"}))
	testkit.Eventually(t, 20*time.Second, "root placement names the set", func() string {
		s := testkit.RootStatus(t, c, ns, "p1")
		if len(s.Placement) != 1 || s.Placement[0].PolicySet != "set" || s.Placement[0].Placement != "pl" {
			return fmt.Sprintf("placement %+v", s.Placement)
		}
		return ""
	})

	testkit.Eventually(t, 20*time.Second, "PolicySet status message while its policies have no status", func() string {
		set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
		get(t, set)
		if want := "No status provided while awaiting policy status: p1, p2"; set.Status.StatusMessage != want || set.Status.Compliant != "" {
			return fmt.Sprintf("set status %+v, want message %q and no compliance", set.Status, want)
		}
		return ""
	})
	for _, name := range []string{"p1", "p2"} {
		for _, cl := range []string{"cluster-d", "cluster-e"} {
			r := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cl, Name: replication.Name(ns, name)}}
			get(t, r)
			r.Status.ComplianceState = policyv1.Compliant
			if err := c.Status().Update(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	testkit.Eventually(t, 20*time.Second, "PolicySet status", func() string {
		set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
		get(t, set)
		if set.Status.Compliant != policyv1.Compliant || len(set.Status.Placement) != 1 || set.Status.Placement[0].Placement != "pl" ||
			set.Status.StatusMessage != "All policies are reporting status" {
			return fmt.Sprintf("set status %+v", set.Status)
		}
		return ""
	})

	// Removing p2 from the set unbinds it everywhere.
	set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
	get(t, set)
	set.Spec.Policies = []policyv1.NonEmptyString{"p1"}
	if err := c.Update(ctx, set); err != nil {
		t.Fatal(err)
	}
	expectReplicas(t, ns, "p2", map[string]string{})
	expectReplicas(t, ns, "p1", want([]string{"cluster-d", "cluster-e"}, nil))
}

// TestHubSettles checks there is no hot loop: once replicas and status are
// written, and a replica reports status, the hub issues no further writes.
func TestHubSettles(t *testing.T) {
	ns := "settles"
	testkit.Apply(t, c, policyYAML(ns, "p", "inform"))
	testkit.Apply(t, c, ruleYAML(ns, "r", "cluster-a", "cluster-b", "cluster-c"))
	testkit.Apply(t, c, bindingYAML(ns, "pb", "r", "p", "remediationActionOverride: {remediationAction: enforce}"))
	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b", "cluster-c"}, []string{"cluster-a", "cluster-b", "cluster-c"}))
	replica := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-b", Name: replication.Name(ns, "p")}}
	get(t, replica)
	replica.Status.ComplianceState = policyv1.Compliant
	if err := c.Status().Update(context.Background(), replica); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "root status", func() string {
		if s := testkit.RootStatus(t, c, ns, "p"); len(s.Status) != 3 || s.Status[1].ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("%+v", s.Status)
		}
		return ""
	})
	before := hub.ReplicaWritesTotal()
	time.Sleep(2 * time.Second)
	if after := hub.ReplicaWritesTotal(); after != before {
		t.Fatalf("the hub kept writing replicas with nothing changing: %v writes in 2s", after-before)
	}
}

// TestPolicySetDependencyExpandedWhenTheSetAppears: a root depending on a
// PolicySet that does not exist yet keeps the dependency as written on its
// replicas, and gets it expanded into the set's members once the set is created.
func TestPolicySetDependencyExpandedWhenTheSetAppears(t *testing.T) {
	ns := "set-dependency"
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: dependent, namespace: %[1]s}
spec:
  disabled: false
  remediationAction: inform
  dependencies:
  - {apiVersion: policy.open-cluster-management.io/v1beta1, kind: PolicySet, name: base, compliance: Compliant}
  policy-templates: []
`, ns))
	testkit.Apply(t, c, ruleYAML(ns, "r", "cluster-a"))
	testkit.Apply(t, c, bindingYAML(ns, "pb", "r", "dependent", ""))
	expectReplicas(t, ns, "dependent", want([]string{"cluster-a"}, nil))
	deps := func() string {
		r := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: replication.Name(ns, "dependent")}}
		get(t, r)
		var out []string
		for _, d := range r.Spec.Dependencies {
			out = append(out, d.Kind+"/"+d.Name)
		}
		return fmt.Sprint(out)
	}
	if got := deps(); got != "[PolicySet/base]" {
		t.Fatalf("dependencies before the set exists: %s", got)
	}
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: base, namespace: %s}
spec: {policies: [m1, m2]}
`, ns))
	testkit.Eventually(t, 20*time.Second, "the dependency expanded", func() string {
		if got := deps(); got != "[Policy/set-dependency.m1 Policy/set-dependency.m2]" {
			return got
		}
		return ""
	})
}
