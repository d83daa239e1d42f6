package complianceevents

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// Event is a compliance event to write, in the involved object's namespace.
type Event struct {
	Involved corev1.ObjectReference
	// Related is the object the event is also about (optional).
	Related *corev1.ObjectReference
	// Reason is history.Reason of the template.
	Reason string
	// Message starts with the compliance: "Compliant; ...", "NonCompliant; ...".
	Message string
	// Action and Component say what wrote the event.
	Action, Component string
}

// Write creates ev at time at under a name of its own (see the package
// documentation) and returns the name and the time it was written with.
func Write(ctx context.Context, c client.Client, ev Event, at time.Time) (string, time.Time, error) {
	for {
		name := history.EventName(ev.Involved.Name, at)
		err := Create(ctx, c, ev, name, at)
		if !apierrors.IsAlreadyExists(err) {
			return name, at, err
		}
		at = at.Add(time.Nanosecond)
	}
}

// Create creates ev named name at time at; an event of that name already there
// is an AlreadyExists error.
func Create(ctx context.Context, c client.Client, ev Event, name string, at time.Time) error {
	stamp := metav1.NewTime(at)
	return c.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ev.Involved.Namespace, Name: name},
		InvolvedObject: ev.Involved,
		Related:        ev.Related,
		Reason:         ev.Reason,
		Message:        ev.Message,
		Type:           history.EventType(ev.Message),
		Action:         ev.Action,
		Source:         corev1.EventSource{Component: ev.Component},
		FirstTimestamp: stamp,
		LastTimestamp:  stamp,
		Count:          1,
	})
}
