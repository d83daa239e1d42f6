package hub

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// ConditionInvalid is the root condition that says why the hub cannot
// propagate the root as written (True, with the reason and a message naming the
// field); it is removed once the root propagates. The API server refuses most
// of these at admission (the Policy CRD's rules, the hub's
// ValidatingAdmissionPolicy); this reports what got through, e.g. written
// before a rule existed. While it is True, the root's replicas are left as
// they are.
const ConditionInvalid = "Invalid"

// Reasons of ConditionInvalid.
const (
	reasonNameTooLong        = "NameTooLong"
	reasonInClusterNamespace = "InClusterNamespace"
)

// rootProblem returns why a Policy that is not a replica cannot be a root
// policy at all: its namespace and name are too long for its replicas' label,
// or it lives in a ManagedCluster's namespace, where OCM keeps replicas and
// never reads a root.
func (p *Propagator) rootProblem(ctx context.Context, root *policyv1.Policy) (reason string, problem, err error) {
	if err := replication.ValidateRootName(root.Namespace, root.Name); err != nil {
		return reasonNameTooLong, err, nil
	}
	err = p.Client.Get(ctx, types.NamespacedName{Name: root.Namespace}, &clusterv1.ManagedCluster{})
	switch {
	case err == nil:
		return reasonInClusterNamespace, fmt.Errorf("namespace %s belongs to ManagedCluster %s, where the hub writes replicas: "+
			"a Policy there is not propagated (as in OCM); write root policies in another namespace", root.Namespace, root.Namespace), nil
	case apierrors.IsNotFound(err):
		return "", nil, nil
	default:
		return "", nil, err
	}
}

// reportInvalid records on the root why it cannot be propagated, as an Event
// and as the Invalid condition, and leaves its replicas as they are: a fix to
// the root, or to the binding, enqueues it again.
func (p *Propagator) reportInvalid(ctx context.Context, root *policyv1.Policy, reason string, problem error) (ctrl.Result, error) {
	p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reason, "Propagate", "%v", problem)
	reconcileTotal.WithLabelValues("invalid").Inc()
	p.failures.forget(client.ObjectKeyFromObject(root)) // its replicas are left as they are: no streak goes on
	cond := metav1.Condition{Type: ConditionInvalid, Status: metav1.ConditionTrue, ObservedGeneration: root.Generation,
		Reason: reason, Message: problem.Error()}
	if was := meta.FindStatusCondition(root.Status.Conditions, ConditionInvalid); was != nil && was.Status == cond.Status &&
		was.Reason == cond.Reason && was.Message == cond.Message && was.ObservedGeneration == cond.ObservedGeneration {
		return ctrl.Result{}, nil
	}
	updated := root.DeepCopy()
	meta.SetStatusCondition(&updated.Status.Conditions, cond)
	if err := p.Client.Status().Update(ctx, updated); err != nil && !apierrors.IsNotFound(err) {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: stepRequeueDelay}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
