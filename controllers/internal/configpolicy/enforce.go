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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// judged is one object of an object template, judged: the object as the
// definition would have it (desired), as it is on the cluster (existing, nil
// when it is not there), the verdict on it, the comparison it was judged
// by, and its result as the verdict words it.
type judged struct {
	desired, existing *unstructured.Unstructured
	verdict           configpolicy.Verdict
	cmp               configpolicy.Comparison
	res               configpolicy.Result
}

// conclude settles a judged object (settle) and reports it: its result and
// its related object. own, when not nil, are the policy's own writes: an
// object found as specified that is still as the policy wrote it keeps the
// write's reason, and a write made is recorded.
func (r *reconciler) conclude(ctx context.Context, s templateScope, j judged, own *ownWrites) (configpolicy.Result, policyv1.RelatedObject) {
	if j.verdict.Reason == configpolicy.ReasonFoundAsSpecified {
		if reason, ok := own.standing(j.existing); ok {
			j.res.Reason = reason // as the policy wrote it
		}
	}
	st := r.settle(ctx, s, j)
	if wrote := j.verdict.Action == configpolicy.ActionCreate || j.verdict.Action == configpolicy.ActionUpdate; wrote && st.res.Compliant {
		own.wrote(st.now, st.res.Reason)
	}
	// A mustnothave object is not the policy's: its entry has no properties
	// (as in OCM), so pruning never deletes it.
	var uidOf *unstructured.Unstructured
	if (j.existing != nil || st.created) && s.ct != policyv1.MustNotHave {
		uidOf = st.now
	}
	return st.res, withDiff(relatedObject(j.desired, j.res.Namespace, j.res.Name, st.res, uidOf, st.created), st.diff)
}

// settled is a judged object after settle: the object as it is now, whether
// the policy created it, the diff to record in its related object, and its
// result (the verdict's, or why its write was not made).
type settled struct {
	now     *unstructured.Unstructured
	created bool
	diff    string
	res     configpolicy.Result
}

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

// settle makes the write the verdict on j asks for, as OCM does: an existing
// musthave or mustonlyhave object that differs is first updated with a dry
// run, whose result the diff shows (recorded as the definition's update
// rules say); an update the API server refuses as invalid (an immutable
// field) is not made, or is made by recreating the object when the rules
// allow it (always with Always).
func (r *reconciler) settle(ctx context.Context, s templateScope, j judged) settled {
	update, cmp, existing := s.def.update, j.cmp, j.existing
	out := settled{now: existing, res: j.res}
	action := j.verdict.Action
	refused := false
	if existing != nil && s.ct != policyv1.MustNotHave && !cmp.Matches {
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
				out.res.Compliant, out.res.Reason, action = false, configpolicy.ReasonNotAsSpecified, configpolicy.ActionNone
				out.res.Message = fmt.Sprintf("Error issuing a dry run update request for the object `%s`, the error is `%v`", existing.GetName(), err)
			}
		}
		recording := configpolicy.RecordingFor(update.recordDiff, existing.GroupVersionKind().GroupKind(), update.sensitive)
		out.diff = r.recordDiff(ctx, recording, existing, updated)
	}
	if action == configpolicy.ActionUpdate {
		resource, ns, name := out.res.Resource, existing.GetNamespace(), existing.GetName()
		switch configpolicy.HowToUpdate(update.recreate, refused) {
		case configpolicy.UpdateRefused:
			out.res.Compliant, out.res.Reason, out.res.Message = false, configpolicy.ReasonNotAsSpecified, configpolicy.ImmutableMessage(resource, ns, name)
			return out
		case configpolicy.UpdateByRecreating:
			obj, msg := r.recreate(ctx, existing, j.desired, resource)
			if msg != "" {
				out.res.Compliant, out.res.Reason, out.res.Message = false, configpolicy.ReasonNotAsSpecified, msg
				return out
			}
			out.now, out.created = obj, configpolicy.CreatedWithUID(update.previous, string(existing.GetUID()))
			return out
		}
	}
	now, created, err := r.write(ctx, s.cluster, action, j.desired, existing, cmp.Merged)
	if err != nil {
		out.res.Compliant, out.res.Reason = false, configpolicy.Reason(err.Error())
	}
	out.now, out.created = now, created
	return out
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
// (existing when nothing was written), whether it was created, and why the
// write failed ("cannot be created: ..."). A policy evaluated by watch whose
// object cannot be created for want of its namespace watches the namespace,
// as OCM does: its creation (or end) may let the object be created.
func (r *reconciler) write(ctx context.Context, cluster clusterReader, action configpolicy.Action, desired, existing *unstructured.Unstructured,
	merged map[string]any) (*unstructured.Unstructured, bool, error) {
	switch action {
	case configpolicy.ActionCreate:
		obj := desired.DeepCopy()
		if err := r.Client.Create(ctx, obj); err != nil {
			if cluster.watching() && namespaceMissingOrTerminating(err) {
				_, _ = cluster.get(ctx, corev1.SchemeGroupVersion.WithKind("Namespace"), "", obj.GetNamespace())
			}
			return existing, false, fmt.Errorf("cannot be created: %w", err)
		}
		return obj, true, nil
	case configpolicy.ActionUpdate:
		obj := &unstructured.Unstructured{Object: merged}
		if err := r.Client.Update(ctx, obj); err != nil {
			return existing, false, fmt.Errorf("cannot be updated: %w", err)
		}
		return obj, false, nil
	case configpolicy.ActionDelete:
		if err := r.Client.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
			return existing, false, fmt.Errorf("cannot be deleted: %w", err)
		}
	}
	return existing, false, nil
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

func relatedObject(desired *unstructured.Unstructured, ns, name string, res configpolicy.Result, obj *unstructured.Unstructured, created bool) policyv1.RelatedObject {
	ro := policyv1.RelatedObject{
		Object: policyv1.ObjectResource{
			Kind: desired.GetKind(), APIVersion: desired.GetAPIVersion(),
			Metadata: policyv1.ObjectMetadata{Name: name, Namespace: ns},
		},
		Compliant: string(policyv1.NonCompliant),
		Reason:    res.Reason.Related(),
	}
	if res.Compliant {
		ro.Compliant = string(policyv1.Compliant)
	}
	if obj != nil {
		ro.Properties = &policyv1.ObjectProperties{UID: string(obj.GetUID()), CreatedByPolicy: ptr.To(created)}
	}
	return ro
}

// withDiff is ro with diff in its properties (when it has any).
func withDiff(ro policyv1.RelatedObject, diff string) policyv1.RelatedObject {
	if ro.Properties != nil {
		ro.Properties.Diff = diff
	}
	return ro
}

// ownWrites are the objects a ConfigurationPolicy's evaluations created or
// updated, at its generation: each object's resourceVersion after the write
// and the reason the evaluation gave ("was created successfully", "was
// updated successfully").
//
// An evaluation that finds such an object still at that resourceVersion
// finds exactly what the policy wrote and keeps that reason, rather than
// saying "found as specified": the watch of the object sends the policy its
// own write back, and that evaluation would otherwise be a new compliance
// event and four more writes (the ConfigurationPolicy's status, the
// Policy's on both clusters, an Event on the hub) for every object the
// policy makes, trailing the fleet's convergence. OCM's controller does say
// it again.
type ownWrites struct {
	generation int64
	previous   map[string]ownWrite
	// current are the writes this evaluation made or found standing.
	current map[string]ownWrite
}

type ownWrite struct {
	resourceVersion string
	reason          configpolicy.Reason
}

func ownWriteKey(obj *unstructured.Unstructured) string {
	return obj.GroupVersionKind().String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// standing reports the reason the policy gave when it wrote obj, if obj is
// still at the resourceVersion of that write, and keeps it.
func (w *ownWrites) standing(obj *unstructured.Unstructured) (configpolicy.Reason, bool) {
	if w == nil || obj == nil {
		return "", false
	}
	prev, ok := w.previous[ownWriteKey(obj)]
	if !ok || prev.resourceVersion != obj.GetResourceVersion() {
		return "", false
	}
	w.current[ownWriteKey(obj)] = prev
	return prev.reason, true
}

// wrote records that the evaluation created or updated obj (as the API
// server answered the write) for reason.
func (w *ownWrites) wrote(obj *unstructured.Unstructured, reason configpolicy.Reason) {
	if w != nil && obj != nil && obj.GetResourceVersion() != "" {
		w.current[ownWriteKey(obj)] = ownWrite{resourceVersion: obj.GetResourceVersion(), reason: reason}
	}
}
