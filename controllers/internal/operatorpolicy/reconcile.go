package operatorpolicy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/governancemetrics"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/templatewatch"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Finalizer holds an enforcing OperatorPolicy whose deletion may remove its
// operator (operatorpolicy.HoldsFinalizer) until the deletion is handled: the
// operator removed per spec.removalBehavior, or kept when
// operatorpolicy.RemovesOnDeletion says so. ReleaseFinalizers removes it from
// every OperatorPolicy when the spoke is uninstalled.
const Finalizer = "operatorpolicy.fleetpolicy.io/removal"

// reconciler reconciles OperatorPolicies on the managed cluster.
type reconciler struct {
	// client reads OperatorPolicies and the cached OLM kinds, and writes.
	client client.Client
	// reader reads ClusterServiceVersions, Deployments and PackageManifests uncached.
	reader client.Reader
	// defaultNamespace is where an operator is installed when neither the
	// policy nor the PackageManifest says (Options.DefaultNamespace).
	defaultNamespace string
	// templates resolves the policies' managed-cluster templates and
	// watches what they read.
	templates *templatewatch.Resolver
	// boundBackoffs is when policies whose templates met their bounds are
	// evaluated again.
	boundBackoffs templates.Backoffs
	now           func() time.Time
}

// Reconcile brings one OperatorPolicy's operator in line with it and writes its status.
// kindOperatorPolicy is the kind label of OperatorPolicies' governance metric.
const kindOperatorPolicy = "OperatorPolicy"

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	op := &v1beta1.OperatorPolicy{}
	if err := r.client.Get(ctx, req.NamespacedName, op); err != nil {
		if apierrors.IsNotFound(err) {
			op.Namespace, op.Name = req.Namespace, req.Name
			governancemetrics.Forget(kindOperatorPolicy, req.Namespace, req.Name)
			r.boundBackoffs.Forget(req.String())
			return ctrl.Result{}, r.templates.Forget(watcherOf(op))
		}
		return ctrl.Result{}, err
	}
	deleting := !op.DeletionTimestamp.IsZero()
	// The spec as its managed-cluster templates make it; the status is op's.
	resolved, err := r.resolveTemplates(ctx, op)
	var failed templateError
	if err != nil && !errors.As(err, &failed) {
		return ctrl.Result{}, err
	}
	var p operatorpolicy.Policy
	if err == nil {
		p, err = operatorpolicy.Normalize(resolved)
	}
	if err == nil && operatorpolicy.NeedsSubscriptionDefaults(p) {
		// What the cluster defaults it from may change unseen: look again.
		defer func() {
			if err == nil && !result.Requeue && result.RequeueAfter == 0 {
				result.RequeueAfter = packageManifestRecheck
			}
		}()
		var readErr error
		if p, err, readErr = r.subscriptionDefaults(ctx, op, p); readErr != nil {
			return ctrl.Result{}, readErr
		}
	}
	if err != nil {
		if deleting {
			// Nothing can be planned from an invalid spec: let it go.
			return ctrl.Result{}, r.setFinalizer(ctx, op, false)
		}
		reported, reportErr := r.report(ctx, op, operatorpolicy.EvaluateInvalid(err, op.Status.Conditions, r.now()))
		if backoff := r.boundBackoffs.Next(req.String(), templates.IsBoundError(failed.err)); backoff > 0 && reportErr == nil {
			// Templates stopped at their bounds are tried again after a
			// backoff that grows while they keep meeting them.
			reported = ctrl.Result{RequeueAfter: backoff}
		}
		return reported, reportErr
	}
	r.boundBackoffs.Forget(req.String())
	if deleting {
		return r.deleted(ctx, op, p)
	}
	if p.Remove {
		return r.remove(ctx, op, p)
	}
	if err := r.setFinalizer(ctx, op, operatorpolicy.HoldsFinalizer(p)); err != nil {
		return ctrl.Result{}, err
	}
	obs, err := r.observe(ctx, r.client, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs.Created = operatorpolicy.PreviouslyCreated(op.Status.RelatedObjects, p)
	if p.Enforce {
		var invalid error
		if obs, invalid, err = r.enforce(ctx, op, p, obs); err != nil {
			return ctrl.Result{}, err
		}
		if invalid != nil {
			return r.report(ctx, op, operatorpolicy.EvaluateInvalid(invalid, op.Status.Conditions, r.now()))
		}
	}
	return r.report(ctx, op, operatorpolicy.Evaluate(p, obs, op.Status.Conditions, r.now()))
}

// setFinalizer adds or removes Finalizer.
func (r *reconciler) setFinalizer(ctx context.Context, op *v1beta1.OperatorPolicy, want bool) error {
	if controllerutil.ContainsFinalizer(op, Finalizer) == want {
		return nil
	}
	before := op.DeepCopy()
	if want {
		controllerutil.AddFinalizer(op, Finalizer)
	} else {
		controllerutil.RemoveFinalizer(op, Finalizer)
	}
	err := r.client.Patch(ctx, op, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if want || !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// report writes an evaluation: a compliance event when the compliance or a
// condition changed, then the status when anything changed. The event comes
// first: a failed status write evaluates again and says it again, while an
// event lost after the write would never be said.
func (r *reconciler) report(ctx context.Context, op *v1beta1.OperatorPolicy, eval operatorpolicy.Evaluation) (ctrl.Result, error) {
	status := op.Status.DeepCopy()
	status.ComplianceState = eval.Compliance
	status.Conditions = eval.Conditions
	status.RelatedObjects = eval.RelatedObjects
	status.ObservedGeneration = op.Generation
	governancemetrics.Report(kindOperatorPolicy, op.Namespace, op.Name, op.Spec.Severity, eval.Compliance)
	if equality.Semantic.DeepEqual(&op.Status, status) {
		return ctrl.Result{}, nil
	}
	if op.Status.ComplianceState != eval.Compliance || !sameConditions(op.Status.Conditions, eval.Conditions) {
		if err := r.complianceEvents(ctx, op, eval.EventMessage); err != nil {
			return ctrl.Result{}, err
		}
	}
	updated := op.DeepCopy()
	updated.Status = *status
	if err := r.client.Status().Update(ctx, updated); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, fmt.Errorf("writing the status of OperatorPolicy %s/%s: %w", op.Namespace, op.Name, err)
	}
	return ctrl.Result{}, nil
}

// sameConditions compares conditions without their transition times.
func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message {
			return false
		}
	}
	return true
}
