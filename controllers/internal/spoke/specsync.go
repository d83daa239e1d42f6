package spoke

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// annotationHubGeneration, on a policy copied to the managed cluster, is the
// generation of the hub replica whose spec the copy holds: status sync reports
// it to the hub as the generation it evaluated.
const annotationHubGeneration = "fleetpolicy.io/hub-generation"

// SpecSync mirrors the replicated policies of the hub's cluster namespace into
// the same namespace of the managed cluster: spec, labels and annotations, the
// namespace created when missing, a copy removed when its replica is. A change
// made to a copy on the managed cluster is reverted.
type SpecSync struct {
	Managed   client.Client
	Hub       client.Client
	Namespace string
}

// Reconcile brings one policy's copy on the managed cluster in line with the hub.
func (s *SpecSync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	replica := &policyv1.Policy{}
	err := s.Hub.Get(ctx, req.NamespacedName, replica)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	onHub := err == nil
	copied := &policyv1.Policy{}
	err = s.Managed.Get(ctx, req.NamespacedName, copied)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	onManaged := err == nil

	switch {
	case !onHub && onManaged:
		if !mirrored(copied) {
			return ctrl.Result{}, nil // not a copy of ours: leave it alone
		}
		return ctrl.Result{}, client.IgnoreNotFound(s.Managed.Delete(ctx, copied))
	case !onHub:
		return ctrl.Result{}, nil
	case onManaged && copied.UID == replica.UID:
		// The managed cluster is the hub (a self-managed hub, OCM's
		// local-cluster): the replica is its own copy. Writing the
		// hub-generation annotation on it would fight the hub, which
		// writes the replica's annotations as the root's.
		return ctrl.Result{}, nil
	}

	labels := maps.Clone(replica.Labels)
	annotations := maps.Clone(replica.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationHubGeneration] = strconv.FormatInt(replica.Generation, 10)
	if !onManaged {
		if err := s.ensureNamespace(ctx); err != nil {
			return ctrl.Result{}, err
		}
		copied = &policyv1.Policy{
			ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name, Labels: labels, Annotations: annotations},
			Spec:       replica.Spec,
		}
		err := s.Managed.Create(ctx, copied)
		if apierrors.IsAlreadyExists(err) {
			return ctrl.Result{Requeue: true}, nil // the cache was behind
		}
		return ctrl.Result{}, err
	}
	same, err := sameSpec(replica.Spec, copied.Spec)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("policy %s: %w", req.NamespacedName, err)
	}
	if same && maps.Equal(labels, copied.Labels) && maps.Equal(annotations, copied.Annotations) {
		return ctrl.Result{}, nil
	}
	copied.Spec = replica.Spec
	copied.Labels, copied.Annotations = labels, annotations
	err = s.Managed.Update(ctx, copied)
	if apierrors.IsConflict(err) {
		return ctrl.Result{Requeue: true}, nil
	}
	return ctrl.Result{}, err
}

func (s *SpecSync) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{}
	err := s.Managed.Get(ctx, client.ObjectKey{Name: s.Namespace}, ns)
	if !apierrors.IsNotFound(err) {
		return err
	}
	ns.Name = s.Namespace
	if err := s.Managed.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", s.Namespace, err)
	}
	return nil
}

// mirrored reports whether a policy on the managed cluster is a copy spec sync
// made of a hub replica.
func mirrored(p *policyv1.Policy) bool {
	_, copied := p.Annotations[annotationHubGeneration]
	return copied || replication.IsReplica(p)
}

// sameSpec compares two specs as JSON values, so that templates written with
// other key orders or spacing compare equal.
func sameSpec(a, b policyv1.PolicySpec) (bool, error) {
	va, err := jsonValue(a)
	if err != nil {
		return false, err
	}
	vb, err := jsonValue(b)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(va, vb), nil
}

func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(raw, &out)
}
