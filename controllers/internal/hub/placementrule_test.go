package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// ruleClusters registers ManagedClusters with labels, an Available condition
// and allocatable cpu, for the PlacementRule scheduler to choose from.
func ruleClusters(t *testing.T, specs map[string]struct {
	labels    map[string]string
	available metav1.ConditionStatus
	cpu       string
}) {
	t.Helper()
	ctx := context.Background()
	for name, s := range specs {
		if err := localplane.EnsureCluster(ctx, c, name); err != nil {
			t.Fatal(err)
		}
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			t.Fatal(err)
		}
		mc.Labels = s.labels
		if err := c.Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
		mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: s.available,
			Reason: "Test", LastTransitionTime: metav1.Now()}}
		mc.Status.Allocatable = clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse(s.cpu)}
		if err := c.Status().Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
	}
}

// ruleDecisions is the cluster names of a PlacementRule's decisions, in order,
// and its Scheduled condition.
func ruleDecisions(t *testing.T, ns, name string) ([]string, *metav1.Condition) {
	t.Helper()
	rule := &appsv1.PlacementRule{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rule); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, d := range rule.Status.Decisions {
		names = append(names, d.ClusterName)
	}
	return names, meta.FindStatusCondition(rule.Status.Conditions, hub.PlacementRuleScheduled)
}

func expectDecisions(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("decisions of PlacementRule %s/%s", ns, name), func() string {
		if got, _ := ruleDecisions(t, ns, name); !slices.Equal(got, want) {
			return fmt.Sprintf("decisions %v, want %v", got, want)
		}
		return ""
	})
}

// TestPlacementRuleScheduler: the hub writes PlacementRules' decisions from
// every field of their spec, as OCM's PlacementRule controller does, follows
// the clusters' labels and conditions, replicates to what it decided, leaves a
// rule naming another scheduler alone and reports a spec it cannot decide on.
func TestPlacementRuleScheduler(t *testing.T) {
	ctx := context.Background()
	const ns = "placementrules"
	type clusterSpec = struct {
		labels    map[string]string
		available metav1.ConditionStatus
		cpu       string
	}
	ruleClusters(t, map[string]clusterSpec{
		"prx-a": {map[string]string{"prtest": "yes"}, metav1.ConditionTrue, "4"},
		"prx-b": {map[string]string{"prtest": "yes"}, metav1.ConditionTrue, "8"},
		"prx-c": {map[string]string{"prtest": "yes"}, metav1.ConditionFalse, "16"},
		"prx-d": {map[string]string{"prtest": "no", "name": "prx-d"}, metav1.ConditionTrue, "2"},
	})
	testkit.Apply(t, c, policyYAML(ns, "p", "inform")+`
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: available, namespace: placementrules}
spec:
  clusterSelector: {matchLabels: {prtest: "yes"}}
  clusterConditions: [{type: ManagedClusterConditionAvailable, status: "True"}]
  policies: [{kind: Policy, name: p}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: available, namespace: placementrules}
placementRef: {apiGroup: apps.open-cluster-management.io, kind: PlacementRule, name: available}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}]
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: biggest, namespace: placementrules}
spec:
  clusterSelector: {matchExpressions: [{key: prtest, operator: Exists}]}
  clusterReplicas: 2
  resourceHint: {type: cpu}
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: named, namespace: placementrules}
spec:
  schedulerName: mcm
  clusters: [{name: prx-d}, {name: prx-a}, {name: prx-nowhere}]
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: elsewhere, namespace: placementrules}
spec:
  schedulerName: another-scheduler
  clusterSelector: {matchLabels: {prtest: "yes"}}
status:
  decisions: [{clusterName: prx-d, clusterNamespace: prx-d}]
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: invalid, namespace: placementrules}
spec:
  clusterSelector: {matchExpressions: [{key: prtest, operator: Near}]}
status:
  decisions: [{clusterName: prx-a, clusterNamespace: prx-a}]
`)
	expectDecisions(t, ns, "available", "prx-a", "prx-b")
	expectDecisions(t, ns, "biggest", "prx-c", "prx-b")
	expectDecisions(t, ns, "named", "prx-a", "prx-d")

	t.Run("replicas follow the decisions", func(t *testing.T) {
		expectRuleReplicas(t, ns, "p", "prx-a", "prx-b")
	})

	t.Run("a cluster's condition and labels change the decisions", func(t *testing.T) {
		setAvailable(t, "prx-c", metav1.ConditionTrue)
		expectDecisions(t, ns, "available", "prx-a", "prx-b", "prx-c")
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "prx-a"}, mc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(mc.DeepCopy())
		mc.Labels["prtest"] = "no"
		if err := c.Patch(ctx, mc, patch); err != nil {
			t.Fatal(err)
		}
		expectDecisions(t, ns, "available", "prx-b", "prx-c")
		expectRuleReplicas(t, ns, "p", "prx-b", "prx-c")
	})

	t.Run("another scheduler's rule is left alone", func(t *testing.T) {
		// Give the scheduler time to have acted on it, had it wanted to.
		time.Sleep(time.Second)
		if got, cond := ruleDecisions(t, ns, "elsewhere"); !slices.Equal(got, []string{"prx-d"}) || cond != nil {
			t.Errorf("decisions %v, condition %v: want the written [prx-d] and no condition", got, cond)
		}
	})

	t.Run("a spec that cannot be decided on is reported and keeps its decisions", func(t *testing.T) {
		testkit.Eventually(t, 20*time.Second, "Scheduled=False naming spec.clusterSelector", func() string {
			got, cond := ruleDecisions(t, ns, "invalid")
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "InvalidSpec" ||
				!strings.Contains(cond.Message, "spec.clusterSelector") || !strings.Contains(cond.Message, "Near") {
				return fmt.Sprintf("condition %+v", cond)
			}
			if !slices.Equal(got, []string{"prx-a"}) {
				return fmt.Sprintf("decisions %v, want the earlier [prx-a]", got)
			}
			return ""
		})
		if _, cond := ruleDecisions(t, ns, "available"); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Errorf("a valid rule's condition: %+v, want Scheduled=True", cond)
		}
	})
}

// setAvailable sets a ManagedCluster's Available condition.
func setAvailable(t *testing.T, name string, status metav1.ConditionStatus) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
		Status: status, Reason: "Test"})
	if err := c.Status().Update(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
}

// expectRuleReplicas waits until root ns/name has replicas exactly in the
// prx-* clusters named.
func expectRuleReplicas(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("replicas of %s/%s", ns, name), func() string {
		var got []string
		for _, cl := range []string{"prx-a", "prx-b", "prx-c", "prx-d"} {
			err := c.Get(context.Background(), client.ObjectKey{Namespace: cl, Name: replication.Name(ns, name)}, &policyv1.Policy{})
			if err == nil {
				got = append(got, cl)
			} else if client.IgnoreNotFound(err) != nil {
				return err.Error()
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("replicas in %v, want %v", got, want)
		}
		return ""
	})
}
