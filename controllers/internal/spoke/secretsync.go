package spoke

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// SecretSync copies the hub's encryption key Secret (templates.
// EncryptionKeySecret) of the cluster namespace to the same namespace of the
// managed cluster, where the ConfigurationPolicy controller decrypts with it
// the values the hub's templates encrypted, as OCM's framework add-on does: the
// data only (no annotations or labels), updated when the hub's changes (key
// rotation) and deleted when the hub's goes.
type SecretSync struct {
	Managed, Hub client.Client
	Namespace    string // the cluster namespace
}

// Reconcile syncs the key Secret.
func (s *SecretSync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != templates.EncryptionKeySecret || req.Namespace != s.Namespace {
		return ctrl.Result{}, nil
	}
	key := client.ObjectKey{Namespace: s.Namespace, Name: templates.EncryptionKeySecret}
	source := &corev1.Secret{}
	err := s.Hub.Get(ctx, key, source)
	if apierrors.IsNotFound(err) {
		copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		return ctrl.Result{}, client.IgnoreNotFound(s.Managed.Delete(ctx, copied))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	copied := &corev1.Secret{}
	err = s.Managed.Get(ctx, key, copied)
	switch {
	case apierrors.IsNotFound(err):
		copied = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: source.Data}
		err := s.Managed.Create(ctx, copied)
		if apierrors.IsAlreadyExists(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		// The cluster namespace may not exist yet: spec sync creates it, and
		// the error retries.
		return ctrl.Result{}, err
	case err != nil:
		return ctrl.Result{}, err
	case equality.Semantic.DeepEqual(copied.Data, source.Data):
		return ctrl.Result{}, nil
	}
	copied.Data = source.Data
	return ctrl.Result{}, s.Managed.Update(ctx, copied)
}
