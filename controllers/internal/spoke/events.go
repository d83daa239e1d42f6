package spoke

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/complianceevents"
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
	clock  clock.PassiveClock
}

// compliance writes a compliance event about policy for the template named
// template (in templateNamespace, empty when cluster-scoped) and returns its
// name and time.
func (w *eventWriter) compliance(ctx context.Context, policy policyRef, templateNamespace, template, message string) (string, time.Time, error) {
	return complianceevents.Write(ctx, w.client, policy.event(history.Reason(templateNamespace, template), message), w.clock.Now())
}

// copyEvent writes the event named name about policy unless it exists: the copy
// of a managed cluster's compliance event on the hub.
func (w *eventWriter) copyEvent(ctx context.Context, policy policyRef, name, reason, message string, at time.Time) error {
	err := complianceevents.Create(ctx, w.client, policy.event(reason, message), name, at)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// event is a compliance event about the policy.
func (p policyRef) event(reason, message string) complianceevents.Event {
	return complianceevents.Event{
		Involved: corev1.ObjectReference{
			APIVersion: policyv1.GroupVersion.String(),
			Kind:       "Policy",
			Namespace:  p.Namespace,
			Name:       p.Name,
			UID:        p.UID,
		},
		Reason:    reason,
		Message:   message,
		Component: eventComponent,
	}
}
