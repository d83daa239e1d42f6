package configpolicy

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// updateRules are how an object template records the difference of an
// object and updates it.
type updateRules struct {
	recreate   policyv1.RecreateOption
	recordDiff policyv1.RecordDiff
	// sensitive is true when the templates of the definition read
	// sensitive data.
	sensitive bool
	// previous are the status's related objects: an object recreated stays
	// created by the policy when the one it replaces was.
	previous []policyv1.RelatedObject
	// own are the objects the policy's evaluations wrote (nil: none kept).
	own *ownWrites
}

// recreateAttempts is how many times recreating an object tries to create it
// again while the deleted one is still going, recreateRetryDelay apart (as
// OCM).
const (
	recreateAttempts   = 3
	recreateRetryDelay = time.Second
)

// settle makes the write verdict asks for on existing (exists says whether
// it is on the cluster; cmp compares it with desired), as OCM does: an
// existing musthave or mustonlyhave object that differs is first updated
// with a dry run, whose result the diff shows (recorded as update says); an
// update the API server refuses as invalid (an immutable field) is not made,
// or is made by recreating the object when update.recreate allows it (always
// with Always). It returns the object as it is now, whether the policy
// created it and the diff to record in its related object.
func (r *reconciler) settle(ctx context.Context, cluster clusterReader, verdict configpolicy.Verdict, cmp configpolicy.Comparison, exists bool,
	ct policyv1.ComplianceType, desired, existing *unstructured.Unstructured, update *updateRules, res *configpolicy.Result) (
	now *unstructured.Unstructured, created bool, diff string) {
	action := verdict.Action
	refused := false
	if exists && ct != policyv1.MustNotHave && !cmp.Matches {
		updated := cmp.Expected
		if cmp.Fixable() {
			dryRun := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(cmp.Merged)}
			err := r.Client.Update(ctx, dryRun, client.DryRunAll)
			switch {
			case err == nil:
				updated = dryRun.Object
			case apierrors.IsInvalid(err):
				refused = true
			default:
				res.Compliant, res.Reason, action = false, configpolicy.ReasonNotAsSpecified, configpolicy.ActionNone
				res.Message = fmt.Sprintf("Error issuing a dry run update request for the object `%s`, the error is `%v`", existing.GetName(), err)
			}
		}
		recording := configpolicy.RecordingFor(update.recordDiff, existing.GroupVersionKind().GroupKind(), update.sensitive)
		diff = r.recordDiff(ctx, recording, existing, updated)
	}
	if action == configpolicy.ActionUpdate {
		resource, ns, name := res.Resource, existing.GetNamespace(), existing.GetName()
		switch configpolicy.HowToUpdate(update.recreate, refused) {
		case configpolicy.UpdateRefused:
			res.Compliant, res.Reason, res.Message = false, configpolicy.ReasonNotAsSpecified, configpolicy.ImmutableMessage(resource, ns, name)
			return existing, false, diff
		case configpolicy.UpdateByRecreating:
			obj, msg := r.recreate(ctx, existing, desired, resource)
			if msg != "" {
				res.Compliant, res.Reason, res.Message = false, configpolicy.ReasonNotAsSpecified, msg
				return existing, false, diff
			}
			return obj, configpolicy.CreatedWithUID(update.previous, string(existing.GetUID())), diff
		}
	}
	now, created = r.write(ctx, cluster, action, desired, existing, cmp.Merged, res)
	return now, created, diff
}

// withDiff is ro with diff in its properties (when it has any).
func withDiff(ro policyv1.RelatedObject, diff string) policyv1.RelatedObject {
	if ro.Properties != nil {
		ro.Properties.Diff = diff
	}
	return ro
}

// recordDiff records the difference between existing and updated (the object
// as the policy would have it) as recording says: the diff to write in the
// related object's status, or logged. A diff that cannot be made is logged
// and not recorded, as in OCM.
func (r *reconciler) recordDiff(ctx context.Context, recording configpolicy.DiffRecording,
	existing *unstructured.Unstructured, updated map[string]any) string {
	log := ctrl.LoggerFrom(ctx).WithValues("kind", existing.GetKind(), "namespace", existing.GetNamespace(), "name", existing.GetName())
	rec, err := configpolicy.RecordDiff(recording, existing.Object, updated)
	if err != nil {
		log.Error(err, "Failed to generate the diff")
		return ""
	}
	if rec.Log != "" {
		log.Info("Logging the diff:\n" + rec.Log)
	}
	return rec.InStatus
}

// recreate deletes existing and creates desired in its place, trying again
// while the deleted object is still there (recreateAttempts times,
// recreateRetryDelay apart), as OCM does. It returns the object created, or
// the violation message saying why there is none.
func (r *reconciler) recreate(ctx context.Context, existing, desired *unstructured.Unstructured, resource string) (
	*unstructured.Unstructured, string) {
	ns, name := desired.GetNamespace(), desired.GetName()
	if err := r.Client.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
		return nil, configpolicy.RecreateDeleteFailedMessage(resource, ns, name, err)
	}
	for attempt := 1; ; attempt++ {
		obj := desired.DeepCopy()
		err := r.Client.Create(ctx, obj)
		switch {
		case err == nil:
			return obj, ""
		case !apierrors.IsAlreadyExists(err):
			return nil, configpolicy.RecreateFailedMessage(resource, ns, name, err)
		case attempt == recreateAttempts:
			return nil, configpolicy.RecreateTimeoutMessage(resource, ns, name)
		}
		select {
		case <-ctx.Done():
			return nil, configpolicy.RecreateTimeoutMessage(resource, ns, name)
		case <-time.After(recreateRetryDelay):
		}
	}
}

// write makes the write a verdict asks for: action creates desired, updates
// existing to merged or deletes existing. It returns the object as it is now
// (existing when nothing was written) and whether it was created; a failed
// write makes res non-compliant with the error. A policy evaluated by watch
// whose object cannot be created for want of its namespace watches the
// namespace, as OCM does: its creation (or end) may let the object be created.
func (r *reconciler) write(ctx context.Context, cluster clusterReader, action configpolicy.Action, desired, existing *unstructured.Unstructured,
	merged map[string]any, res *configpolicy.Result) (*unstructured.Unstructured, bool) {
	switch action {
	case configpolicy.ActionCreate:
		obj := desired.DeepCopy()
		if err := r.Client.Create(ctx, obj); err != nil {
			res.Compliant, res.Reason = false, configpolicy.Reason("cannot be created: "+err.Error())
			if cluster.watching() && namespaceMissingOrTerminating(err) {
				_, _ = cluster.get(ctx, corev1.SchemeGroupVersion.WithKind("Namespace"), "", obj.GetNamespace())
			}
			return existing, false
		}
		return obj, true
	case configpolicy.ActionUpdate:
		obj := &unstructured.Unstructured{Object: merged}
		if err := r.Client.Update(ctx, obj); err != nil {
			res.Compliant, res.Reason = false, configpolicy.Reason("cannot be updated: "+err.Error())
			return existing, false
		}
		return obj, false
	case configpolicy.ActionDelete:
		if err := r.Client.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
			res.Compliant, res.Reason = false, configpolicy.Reason("cannot be deleted: "+err.Error())
		}
	}
	return existing, false
}

// namespaceMissingOrTerminating reports whether a create failed because its
// namespace does not exist or is being deleted.
func namespaceMissingOrTerminating(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	st := status.Status()
	if st.Details == nil {
		return false
	}
	switch st.Reason {
	case metav1.StatusReasonNotFound:
		return st.Details.Kind == "namespaces"
	case metav1.StatusReasonForbidden:
		return len(st.Details.Causes) > 0 && st.Details.Causes[0].Type == corev1.NamespaceTerminatingCause
	}
	return false
}
