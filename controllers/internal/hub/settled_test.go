package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestReportsTakeTheStatusOnlyPath: once a root's replicas are written, a
// replica's compliance report (with its compliance history, which moves the
// cached time of its last evaluation) reaches the root's status through a
// status-only reconcile that writes no replica; anything else that changes
// what the replicas should be (a binding's override, a replica edited by
// someone else) is still acted on after such reconciles. (A progressive
// rollout, whose reports reach the next wave, is package rollouttest's.)
func TestReportsTakeTheStatusOnlyPath(t *testing.T) {
	ns := "status-only"
	ctx := context.Background()
	testkit.Apply(t, c, policyYAML(ns, "p", "inform"))
	testkit.Apply(t, c, ruleYAML(ns, "r", "cluster-a", "cluster-b", "cluster-c"))
	testkit.Apply(t, c, bindingYAML(ns, "pb", "r", "p", ""))
	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b", "cluster-c"}, nil))

	report := func(cluster string, state policyv1.ComplianceState) {
		t.Helper()
		replica := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: replication.Name(ns, "p")}}
		get(t, replica)
		// As a spoke reports: the compliance, and a new event at the head
		// of the template's history, which moves the replica's last
		// evaluation (rollout.EvaluatedAt) with every report.
		now := time.Now()
		event := policyv1.ComplianceHistory{LastTimestamp: metav1.NewTime(now), Message: string(state) + "; report",
			EventName: fmt.Sprintf("%s.%s.%x", ns, replica.Name, now.UnixNano())}
		if len(replica.Status.Details) == 0 {
			replica.Status.Details = []*policyv1.DetailsPerTemplate{{}}
		}
		details := replica.Status.Details[0]
		details.ComplianceState = state
		details.History = append([]policyv1.ComplianceHistory{event}, details.History...)
		replica.Status.ComplianceState = state
		if err := c.Status().Update(ctx, replica); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "the root shows "+cluster+"'s report", func() string {
			for _, e := range testkit.RootStatus(t, c, ns, "p").Status {
				if e.ClusterName == cluster && e.ComplianceState == state {
					return ""
				}
			}
			return fmt.Sprintf("root status %+v", testkit.RootStatus(t, c, ns, "p").Status)
		})
	}
	// The first reports may still meet the root's last full reconciles.
	report("cluster-a", policyv1.Compliant)
	report("cluster-c", policyv1.Compliant)
	statusOnly, writes := hub.StatusOnlyReconcilesTotal(), hub.ReplicaWritesTotal()
	report("cluster-b", policyv1.NonCompliant)
	if got := hub.StatusOnlyReconcilesTotal() - statusOnly; got < 1 {
		t.Fatalf("a report on a settled root took %v status-only reconciles, want at least 1", got)
	}
	if got := hub.ReplicaWritesTotal() - writes; got != 0 {
		t.Fatalf("a report made the hub write %v replicas", got)
	}
	if s := testkit.RootStatus(t, c, ns, "p"); s.ComplianceState != policyv1.NonCompliant {
		t.Fatalf("root compliance %q after a non-compliant report", s.ComplianceState)
	}

	// A binding's override changes every replica, though the fleet stays.
	testkit.Apply(t, c, bindingYAML(ns, "pb", "r", "p", "remediationActionOverride: {remediationAction: enforce}"))
	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b", "cluster-c"}, []string{"cluster-a", "cluster-b", "cluster-c"}))

	// A replica edited by someone else after more reports is put back.
	report("cluster-a", policyv1.NonCompliant)
	report("cluster-a", policyv1.Compliant)
	replica := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: replication.Name(ns, "p")}}
	get(t, replica)
	replica.Spec.RemediationAction = "inform"
	if err := c.Update(ctx, replica); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the edited replica put back", func() string {
		get(t, replica)
		if replica.Spec.RemediationAction != "enforce" {
			return fmt.Sprintf("replica action %q", replica.Spec.RemediationAction)
		}
		return ""
	})
}
