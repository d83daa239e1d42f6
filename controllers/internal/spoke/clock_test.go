package spoke_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestSpokeReadsItsClock runs the spoke with a clock frozen years ahead and
// checks that every time it writes comes from that clock: the
// ConfigurationPolicy's lastEvaluated and condition time, the compliance event on
// the managed cluster and its copy in the hub replica's history.
func TestSpokeReadsItsClock(t *testing.T) {
	const ns, data = "clock", "clock-data"
	at := time.Date(2031, time.January, 2, 3, 4, 5, 0, time.UTC)
	stopSpoke()
	err := startSpokeWith(func(o *spoke.ManagerOptions) { o.Clock = testingclock.NewFakePassiveClock(at) })
	defer func() {
		if err == nil {
			stopSpoke()
		}
		if err := startSpoke(); err != nil {
			t.Error(err)
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, policyOf(ns, "c", configPolicy("clock-cm", "inform", "musthave", data, "absent"), ""))
	bindToCluster(t, ns, "c")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"c": policyv1.NonCompliant})

	cp := spokeConfigPolicy(t, "clock-cm")
	if cp == nil || cp.Status.LastEvaluated != "2031-01-02T03:04:05Z" {
		t.Fatalf("lastEvaluated is not the spoke clock's time: %+v", cp)
	}
	if d := cp.Status.CompliancyDetails; len(d) != 1 || len(d[0].Conditions) != 1 || !d[0].Conditions[0].LastTransitionTime.Time.Equal(at) {
		t.Fatalf("condition time is not the spoke clock's time: %+v", d)
	}
	var events corev1.EventList
	if err := spokeC.List(context.Background(), &events, client.InNamespace(cluster)); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events.Items {
		if e.InvolvedObject.Name == ns+".c" {
			found = true
			if !e.LastTimestamp.Time.Equal(at) {
				t.Errorf("compliance event %s at %s, want the spoke clock's %s", e.Name, e.LastTimestamp, at)
			}
		}
	}
	if !found {
		t.Fatal("no compliance event about the policy on the managed cluster")
	}
	testkit.Eventually(t, 45*time.Second, "the hub replica's history carries the spoke clock's time", func() string {
		r := hubReplica(t, ns, "c")
		if r == nil || len(r.Status.Details) == 0 || r.Status.Details[0] == nil || len(r.Status.Details[0].History) == 0 {
			return "no history on the hub replica"
		}
		if h := r.Status.Details[0].History[0]; !h.LastTimestamp.Time.Equal(at) {
			return fmt.Sprintf("history entry %s at %s", h.EventName, h.LastTimestamp)
		}
		return ""
	})
}
