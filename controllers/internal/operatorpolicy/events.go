package operatorpolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/complianceevents"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

const (
	// eventComponent is the source component of the compliance events, as
	// OCM's OperatorPolicy controller names itself.
	eventComponent = "operator-policy-controller"
	// eventAction is the action of a compliance event, as OCM's.
	eventAction = "ComplianceStateUpdate"
)

// complianceEvents writes the compliance event about op and, unless op is
// being deleted, about the Policy that owns it.
func (r *reconciler) complianceEvents(ctx context.Context, op *v1beta1.OperatorPolicy, message string) error {
	self := corev1.ObjectReference{
		APIVersion: v1beta1.GroupVersion.String(), Kind: "OperatorPolicy",
		Namespace: op.Namespace, Name: op.Name, UID: op.UID,
	}
	if err := r.event(ctx, self, nil, op, message); err != nil {
		return err
	}
	if !op.DeletionTimestamp.IsZero() {
		return nil
	}
	for _, owner := range op.OwnerReferences {
		if owner.Kind != "Policy" || owner.APIVersion != policyv1.GroupVersion.String() {
			continue
		}
		parent := corev1.ObjectReference{
			APIVersion: owner.APIVersion, Kind: owner.Kind,
			Namespace: op.Namespace, Name: owner.Name, UID: owner.UID,
		}
		if err := r.event(ctx, parent, &self, op, message); err != nil {
			return err
		}
	}
	return nil
}

// event writes one compliance event about involved (package
// complianceevents).
func (r *reconciler) event(ctx context.Context, involved corev1.ObjectReference, related *corev1.ObjectReference, op *v1beta1.OperatorPolicy, message string) error {
	_, _, err := complianceevents.Write(ctx, r.client, complianceevents.Event{
		Involved: involved, Related: related, Reason: history.Reason(op.Namespace, op.Name), Message: message,
		Action: eventAction, Component: eventComponent,
	}, r.now())
	if err != nil {
		return fmt.Errorf("writing the compliance event of OperatorPolicy %s/%s about %s %s: %w", op.Namespace, op.Name, involved.Kind, involved.Name, err)
	}
	return nil
}
