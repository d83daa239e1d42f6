package spoke

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// eventComponent is the source component of the events the spoke writes.
const eventComponent = "fleetpolicy-spoke"

// policyRef names the Policy a compliance event is about.
type policyRef struct {
	Namespace, Name string
	UID             types.UID
}

// eventWriter writes compliance events: core Events about a Policy whose reason
// names the template ("policy: <namespace>/<template>") and whose message
// starts with the compliance ("Compliant; ...", "NonCompliant; ...",
// "Pending; ..."). Their names carry the time to the nanosecond (see package
// history), which orders them and makes copying one to the hub idempotent.
type eventWriter struct {
	client client.Client
}

// compliance writes a compliance event about policy for the template named
// template (in templateNamespace, empty when cluster-scoped) and returns its
// name and time.
func (w *eventWriter) compliance(ctx context.Context, policy policyRef, templateNamespace, template, message string) (string, time.Time, error) {
	at := time.Now()
	for {
		name := history.EventName(policy.Name, at)
		err := w.write(ctx, policy, name, history.Reason(templateNamespace, template), message, at)
		if !apierrors.IsAlreadyExists(err) {
			return name, at, err
		}
		at = at.Add(time.Nanosecond) // another event in the same nanosecond
	}
}

// copyEvent writes the event named name about policy unless it exists: the copy
// of a managed cluster's compliance event on the hub.
func (w *eventWriter) copyEvent(ctx context.Context, policy policyRef, name, reason, message string, at time.Time) error {
	err := w.write(ctx, policy, name, reason, message, at)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (w *eventWriter) write(ctx context.Context, policy policyRef, name, reason, message string, at time.Time) error {
	eventType := corev1.EventTypeWarning
	if strings.HasPrefix(message, string(policyv1.Compliant)+";") {
		eventType = corev1.EventTypeNormal
	}
	stamp := metav1.NewTime(at)
	return w.client.Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: policy.Namespace, Name: name},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: policyv1.GroupVersion.String(),
			Kind:       "Policy",
			Namespace:  policy.Namespace,
			Name:       policy.Name,
			UID:        policy.UID,
		},
		Reason:         reason,
		Message:        message,
		Type:           eventType,
		Source:         corev1.EventSource{Component: eventComponent},
		FirstTimestamp: stamp,
		LastTimestamp:  stamp,
		Count:          1,
	})
}
