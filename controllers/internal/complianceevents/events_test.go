package complianceevents_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/complianceevents"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// TestWriteNeverMergesEvents writes compliance events on a real API server:
// two at the same nanosecond get two names, in order; the type follows the
// compliance; Create of a name already written is AlreadyExists.
func TestWriteNeverMergesEvents(t *testing.T) {
	plane, err := localplane.Start("events")
	testkit.FatalOrSkip(t, "starting the events API server", err)
	t.Cleanup(func() { _ = plane.Stop() })
	ctx := context.Background()
	c := plane.Client
	ev := complianceevents.Event{
		Involved:  corev1.ObjectReference{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Namespace: "default", Name: "p"},
		Reason:    history.Reason("default", "t"),
		Message:   "Compliant; notification - as specified",
		Action:    "ComplianceStateUpdate",
		Component: "test",
	}
	at := time.Unix(1700000000, 5)
	first, firstAt, err := complianceevents.Write(ctx, c, ev, at)
	if err != nil {
		t.Fatal(err)
	}
	ev.Message = "NonCompliant; violation - not as specified"
	second, secondAt, err := complianceevents.Write(ctx, c, ev, at)
	if err != nil {
		t.Fatal(err)
	}
	if first == second || !secondAt.After(firstAt) || first != history.EventName("p", at) {
		t.Fatalf("events %s at %v and %s at %v: want two names, the second later", first, firstAt, second, secondAt)
	}
	for name, want := range map[string]string{first: corev1.EventTypeNormal, second: corev1.EventTypeWarning} {
		got := &corev1.Event{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if got.Type != want || got.Reason != ev.Reason || got.Source.Component != "test" || got.Action != "ComplianceStateUpdate" || got.Count != 1 {
			t.Errorf("event %s: %+v, want type %s and the event's fields", name, got, want)
		}
	}
	if err := complianceevents.Create(ctx, c, ev, first, at); !apierrors.IsAlreadyExists(err) {
		t.Errorf("Create of an existing name: %v, want AlreadyExists", err)
	}
}
