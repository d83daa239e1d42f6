package hub

import (
	"context"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// KeyRotator rotates the policy-encryption-key Secret of each cluster
// namespace as OCM's encryptionkeys controller does (templates.PlanKeyRotation:
// every Period, the old key kept as previousKey for the spokes), and then makes
// the roots whose replicas in that cluster use encryption resolve their hub
// templates again (the trigger-update annotation, as OCM).
type KeyRotator struct {
	Client client.Client
	Clock  clock.PassiveClock
	Random io.Reader
	Period time.Duration
}

// Reconcile looks at one key Secret (the cache holds only those).
func (k *KeyRotator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != templates.EncryptionKeySecret {
		return ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	if err := k.Client.Get(ctx, req.NamespacedName, secret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := k.Clock.Now()
	plan := templates.PlanKeyRotation(secret, now, k.Period)
	if plan.Rotate || plan.DropPreviousKey {
		updated := secret.DeepCopy()
		if err := templates.ApplyKeyRotation(updated, plan, now, k.Random); err != nil {
			return ctrl.Result{}, err
		}
		if err := k.Client.Update(ctx, updated); err != nil {
			return ctrl.Result{}, err
		}
		secret = updated
		log.FromContext(ctx).Info("rotated the policy encryption key", "cluster", req.Namespace, "rotated", plan.Rotate)
	}
	if plan.TriggerUpdate {
		if err := k.triggerUpdate(ctx, secret); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: plan.After}, nil
}

// triggerUpdate sets the trigger-update annotation on the roots whose replicas
// in the Secret's cluster namespace carry an IV (use encryption).
func (k *KeyRotator) triggerUpdate(ctx context.Context, secret *corev1.Secret) error {
	replicas := &policyv1.PolicyList{}
	if err := k.Client.List(ctx, replicas, client.InNamespace(secret.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	value := templates.TriggerUpdateValue(secret)
	patched := map[types.NamespacedName]bool{}
	for i := range replicas.Items {
		replica := &replicas.Items[i]
		root, ok := replication.RootOf(replica)
		if !ok || replica.Annotations[templates.IVAnnotation] == "" || patched[root] {
			continue
		}
		patched[root] = true
		patch := client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"`+templates.TriggerUpdateAnnotation+`":"`+value+`"}}}`))
		obj := &policyv1.Policy{}
		obj.Namespace, obj.Name = root.Namespace, root.Name
		if err := k.Client.Patch(ctx, obj, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
