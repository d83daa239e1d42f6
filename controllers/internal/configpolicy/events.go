package configpolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/complianceevents"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// eventComponent is the source component of the compliance events, the
// spoke's (as those of its template sync).
const eventComponent = "fleetpolicy-spoke"

// complianceEvent writes a compliance event about parent for cp (package
// complianceevents): its reason names cp, its message starts with the
// compliance.
func (r *reconciler) complianceEvent(ctx context.Context, parent corev1.ObjectReference, cp *policyv1.ConfigurationPolicy, message string) error {
	_, _, err := complianceevents.Write(ctx, r.Client, complianceevents.Event{
		Involved: parent, Reason: history.Reason(cp.Namespace, cp.Name), Message: message, Component: eventComponent,
	}, r.clock.Now())
	return err
}

// parent returns the Policy a ConfigurationPolicy belongs to: its owner, or
// the Policy its policy label names.
func (r *reconciler) parent(ctx context.Context, cp *policyv1.ConfigurationPolicy) (corev1.ObjectReference, bool) {
	for _, ref := range cp.OwnerReferences {
		if ref.Kind == "Policy" && ref.APIVersion == policyv1.GroupVersion.String() {
			return policyReference(cp.Namespace, ref.Name, ref.UID), true
		}
	}
	name := cp.Labels[replication.LabelPolicy]
	if name == "" {
		return corev1.ObjectReference{}, false
	}
	p := &policyv1.Policy{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: name}, p); err != nil {
		return corev1.ObjectReference{}, false
	}
	return policyReference(p.Namespace, p.Name, p.UID), true
}

func policyReference(namespace, name string, uid types.UID) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: policyv1.GroupVersion.String(), Kind: "Policy", Namespace: namespace, Name: name, UID: uid}
}
