package configpolicy

import (
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// configurationPolicyCRD is the name of the ConfigurationPolicy CRD, whose
// deletion is the spoke's uninstall signal.
const configurationPolicyCRD = "configurationpolicies.policy.open-cluster-management.io"

// syncFinalizer gives cp the prune finalizer when its pruneObjectBehavior is
// DeleteIfCreated or DeleteAll and takes it away otherwise, as OCM does
// (whatever the remediationAction: which one applies is decided when the
// policy is deleted). While the spoke is being uninstalled (the
// ConfigurationPolicy CRD is being deleted or is gone) it takes the finalizer
// away and reports uninstalling: nothing is evaluated or deleted then.
func (r *reconciler) syncFinalizer(ctx context.Context, cp *policyv1.ConfigurationPolicy) (uninstalling bool, err error) {
	uninstalling, err = r.uninstalling(ctx, r.Client)
	if err != nil {
		return false, err
	}
	want := cp.Spec.PruneObjectBehavior.Prunes() && !uninstalling
	if controllerutil.ContainsFinalizer(cp, configpolicy.PruneFinalizer) == want {
		return uninstalling, nil
	}
	orig := cp.DeepCopy()
	if want {
		controllerutil.AddFinalizer(cp, configpolicy.PruneFinalizer)
	} else {
		controllerutil.RemoveFinalizer(cp, configpolicy.PruneFinalizer)
	}
	return uninstalling, r.Client.Patch(ctx, cp, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// uninstalling reports whether the ConfigurationPolicy CRD is being deleted
// or is gone: the spoke is being uninstalled, and the finalizers go without
// deleting anything (OCM's behaviour when its CRD goes).
func (r *reconciler) uninstalling(ctx context.Context, reader client.Reader) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := reader.Get(ctx, client.ObjectKey{Name: configurationPolicyCRD}, crd)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !crd.DeletionTimestamp.IsZero(), nil
}

// cleanupRetry is how soon the cleanup of a deleted ConfigurationPolicy that
// failed is tried again.
const cleanupRetry = 2 * time.Second

// finishDeletion deletes what a deleted ConfigurationPolicy must delete
// (configpolicy.PruneCandidates, DecidePrune) and then lets it go. A failure
// keeps the finalizer, is reported in its status and in a compliance event on
// its parent, and is tried again after cleanupRetry. (The API
// server bumps the generation when the deletion starts, so the controller's
// GenerationChangedPredicate lets it through.)
func (r *reconciler) finishDeletion(ctx context.Context, cp *policyv1.ConfigurationPolicy) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cp, configpolicy.PruneFinalizer) {
		return ctrl.Result{}, nil
	}
	// Read from the API server: the cache may not have seen the CRD's
	// deletion that deleted this policy, and pruning then would uninstall.
	uninstalling, err := r.uninstalling(ctx, r.Reader)
	if err != nil {
		return ctrl.Result{}, err
	}
	var failures []configpolicy.PruneFailure
	if !uninstalling {
		failures = r.prune(ctx, cp, configpolicy.PruneCandidates(cp.Spec, cp.Status.RelatedObjects, nil, true))
	}
	if len(failures) == 0 {
		orig := cp.DeepCopy()
		controllerutil.RemoveFinalizer(cp, configpolicy.PruneFinalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, cp, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
	}
	retry := ctrl.Result{RequeueAfter: cleanupRetry}
	msg := configpolicy.CleanupMessage(failures)
	if len(cp.Status.CompliancyDetails) == 1 && len(cp.Status.CompliancyDetails[0].Conditions) == 1 &&
		cp.Status.CompliancyDetails[0].Conditions[0].Message == msg {
		return retry, nil
	}
	if parent, ok := r.parent(ctx, cp); ok {
		if err := r.complianceEvent(ctx, parent, cp, configpolicy.ComplianceMessage(false, []string{msg})); err != nil {
			return ctrl.Result{}, err
		}
	}
	updated := cp.DeepCopy()
	updated.Status.ComplianceState = policyv1.NonCompliant
	updated.Status.CompliancyDetails = []policyv1.TemplateStatus{configpolicy.Detail(false, configpolicy.ReasonCleanupError, msg, r.clock.Now())}
	updated.Status.LastEvaluated = r.clock.Now().UTC().Format(time.RFC3339)
	// The relatedObjects stay: they say what is still to delete.
	if err := r.Client.Status().Update(ctx, updated); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return retry, nil
}

// pruneDropped deletes, during an evaluation, the objects of the status's
// relatedObjects that the evaluation no longer relates to (the spec or the
// selected namespaces changed), as OCM does. Failures are only logged: the
// objects are no longer the policy's.
func (r *reconciler) pruneDropped(ctx context.Context, cp *policyv1.ConfigurationPolicy, fresh []policyv1.RelatedObject) {
	for _, f := range r.prune(ctx, cp, configpolicy.PruneCandidates(cp.Spec, cp.Status.RelatedObjects, fresh, false)) {
		ctrl.LoggerFrom(ctx).Info("an object the policy no longer relates to was not deleted",
			"kind", f.Object.Kind, "namespace", f.Object.Metadata.Namespace, "name", f.Object.Metadata.Name, "reason", f.Why)
	}
}

// prune reads each candidate, deletes it when configpolicy.DecidePrune says
// so (on the condition that its uid is still the one read) and returns the
// objects that are not gone.
func (r *reconciler) prune(ctx context.Context, cp *policyv1.ConfigurationPolicy, candidates []policyv1.RelatedObject) []configpolicy.PruneFailure {
	var failures []configpolicy.PruneFailure
	for _, ro := range candidates {
		fail := func(format string, args ...any) {
			failures = append(failures, configpolicy.PruneFailure{Object: ro.Object, Why: fmt.Sprintf(format, args...)})
		}
		live, obj, err := r.live(ctx, ro.Object)
		if err != nil {
			fail("cannot be read: %v", err)
			continue
		}
		switch configpolicy.DecidePrune(cp.Spec.PruneObjectBehavior, ro, live) {
		case configpolicy.PruneKeep:
			continue
		case configpolicy.PruneAwait:
			fail("its deletion is pending, finalizers: %s", strings.Join(obj.GetFinalizers(), ", "))
			continue
		}
		uid := types.UID(live.UID)
		if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); apierrors.IsConflict(err) {
			continue // another object of that name now: not the one decided about
		} else if client.IgnoreNotFound(err) != nil {
			fail("cannot be deleted: %v", err)
			continue
		}
		if live, obj, err = r.live(ctx, ro.Object); err != nil {
			fail("cannot be read after its deletion: %v", err)
		} else if live.Found && live.UID == string(uid) {
			fail("its deletion is pending, finalizers: %s", strings.Join(obj.GetFinalizers(), ", "))
		}
	}
	return failures
}

// live reads the object a related object names, from the API server.
func (r *reconciler) live(ctx context.Context, ref policyv1.ObjectResource) (configpolicy.LiveObject, *unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Metadata.Namespace, Name: ref.Metadata.Name}, obj)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return configpolicy.LiveObject{}, obj, nil
	}
	if err != nil {
		return configpolicy.LiveObject{}, nil, err
	}
	return configpolicy.LiveObject{Found: true, UID: string(obj.GetUID()), Deleting: !obj.GetDeletionTimestamp().IsZero()}, obj, nil
}
