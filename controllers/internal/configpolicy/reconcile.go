package configpolicy

import (
	"context"
	"sync"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/governancemetrics"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/templatewatch"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// reconciler evaluates ConfigurationPolicies on the managed cluster: each object template is compared with the cluster (inform) or made
// true (enforce: create, update or delete), the result is written to the
// ConfigurationPolicy's status, and a compliance event about its parent Policy
// says it when the result changes. The comparison is shared/configpolicy's.
type reconciler struct {
	Client client.Client // cached: ConfigurationPolicies, Policies, Namespaces; writes
	Reader client.Reader // uncached: the objects the templates name, when not evaluated by watch
	Mapper meta.RESTMapper
	// Templates resolves the managed-cluster templates of the object
	// definitions and, for a policy evaluated by watch, reads and watches
	// what the policy evaluates and its templates read.
	Templates *templatewatch.Resolver

	clock clock.PassiveClock
	// boundBackoffs is when policies whose templates met their bounds are
	// evaluated again.
	boundBackoffs templates.Backoffs
	// written holds, per ConfigurationPolicy (types.NamespacedName), the
	// last status this controller wrote (writtenStatus) until the cache
	// shows that write: an evaluation that reads the policy before then
	// compares with what was written, not with the stale copy, so it does
	// not say again what was just said.
	written sync.Map
	// own holds, per ConfigurationPolicy (types.NamespacedName), the
	// objects its last evaluations created or updated (*ownWrites).
	own sync.Map
}

// writtenStatus is a status the controller wrote over the policy's
// resourceVersion from.
type writtenStatus struct {
	from   string
	status policyv1.ConfigurationPolicyStatus
}

// kindConfigurationPolicy is the kind label of ConfigurationPolicies'
// governance metric.
const kindConfigurationPolicy = "ConfigurationPolicy"

// Reconcile evaluates one ConfigurationPolicy.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cp := &policyv1.ConfigurationPolicy{}
	watcher := templatewatch.Watcher(policyv1.GroupVersion.WithKind("ConfigurationPolicy"), req.Namespace, req.Name)
	if err := r.Client.Get(ctx, req.NamespacedName, cp); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.Delete(req.NamespacedName)
			r.own.Delete(req.NamespacedName)
			governancemetrics.Forget(kindConfigurationPolicy, req.Namespace, req.Name)
			r.boundBackoffs.Forget(req.String())
			return ctrl.Result{}, r.Templates.Forget(watcher)
		}
		return ctrl.Result{}, err
	}
	if w, ok := r.written.Load(req.NamespacedName); ok {
		if w := w.(writtenStatus); w.from == cp.ResourceVersion {
			// The cache has not seen the last status write yet.
			cp.Status = *w.status.DeepCopy()
		} else {
			r.written.Delete(req.NamespacedName)
		}
	}
	if !cp.DeletionTimestamp.IsZero() {
		r.boundBackoffs.Forget(req.String())
		if err := r.Templates.Forget(watcher); err != nil {
			return ctrl.Result{}, err
		}
		return r.finishDeletion(ctx, cp)
	}
	if uninstalling, err := r.syncFinalizer(ctx, cp); err != nil {
		return ctrl.Result{}, err
	} else if uninstalling {
		return ctrl.Result{}, r.Templates.Forget(watcher)
	}
	// As OCM: the policy is evaluated by watch when the evaluationInterval
	// of the state it was last found in is watch (the default).
	byWatch := configpolicy.EvaluatesByWatch(cp.Spec.EvaluationInterval, cp.Status.ComplianceState == policyv1.Compliant)
	var ev evaluation
	var stopped *templates.BoundError
	if byWatch {
		if err := r.Templates.Batch(ctx, watcher, func(res templates.Resolver, opts gotemplates.ResolveOptions) {
			ev = r.evaluateAll(ctx, cp, templatingUnlessDisabled(cp, res, opts), watchReader{templates: r.Templates, watcher: watcher})
			stopped = templates.Stopped(res)
		}); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		direct, cancel := r.Templates.Direct(ctx)
		ev = r.evaluateAll(ctx, cp, templatingUnlessDisabled(cp, direct, gotemplates.ResolveOptions{}),
			apiReader{objects: r.Reader, cached: r.Client})
		stopped = templates.Stopped(direct)
		cancel()
	}
	status, compliant, messages := ev.status, ev.compliant, ev.messages
	status.RelatedObjects = configpolicy.CarryCreatedByPolicy(cp.Status.RelatedObjects, status.RelatedObjects)
	// An evaluation that failed somewhere may miss objects that are still the
	// policy's: only a complete one prunes what it no longer relates to.
	if ev.complete {
		r.pruneDropped(ctx, cp, status.RelatedObjects)
	}
	next, err := configpolicy.NextEvaluation(cp.Spec.EvaluationInterval, compliant, byWatch, ev.kindMissing)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "evaluating again as OCM does", "after", next.After)
	}
	if !next.KeepWatches {
		if err := r.Templates.Forget(watcher); err != nil {
			return ctrl.Result{}, err
		}
	}
	requeue := ctrl.Result{Requeue: next.Now, RequeueAfter: next.After}
	if configpolicy.AwaitsRecreate(messages) {
		// An object deleted to be recreated is still going: as OCM, evaluate
		// again at once rather than after the interval (each evaluation waits
		// for it a while already).
		requeue = ctrl.Result{RequeueAfter: recreateRetryDelay}
	}
	if backoff := r.boundBackoffs.Next(req.String(), stopped != nil); backoff > 0 {
		// Templates stopped at their bounds are tried again after a backoff
		// that grows while they keep meeting them, never sooner.
		requeue = ctrl.Result{RequeueAfter: max(requeue.RequeueAfter, backoff)}
	}
	governancemetrics.Report(kindConfigurationPolicy, cp.Namespace, cp.Name, cp.Spec.Severity, status.ComplianceState)

	if sameEvaluation(cp.Status, status) {
		return requeue, nil
	}
	configpolicy.KeepTransitionTimes(cp.Status.CompliancyDetails, status.CompliancyDetails)
	// The event first: a failed status write evaluates again and says it
	// again, while an event lost after the write would never be said.
	if parent, ok := r.parent(ctx, cp); ok {
		if ev.created && !ev.beforeCompliant {
			// As OCM's history shows it: what the evaluation found (the
			// object not found), then that it created it.
			before := configpolicy.ComplianceMessage(false, ev.beforeMessages)
			if err := r.complianceEvent(ctx, parent, cp, before); err != nil {
				return ctrl.Result{}, err
			}
		}
		msg := configpolicy.ComplianceMessage(compliant, messages)
		if custom := cp.Spec.CustomMessage; custom != (policyv1.CustomMessage{}) {
			evaluated := cp.DeepCopy()
			evaluated.Status = status
			asMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(evaluated)
			if err != nil {
				return ctrl.Result{}, err
			}
			if next.KeepWatches {
				configpolicy.WithWholeRelatedObjects(asMap, ev.whole)
			}
			msg = configpolicy.CustomComplianceMessage(custom, compliant, msg, asMap)
		}
		if err := r.complianceEvent(ctx, parent, cp, msg); err != nil {
			return ctrl.Result{}, err
		}
	}
	status.LastEvaluated = r.clock.Now().UTC().Format(time.RFC3339)
	updated := cp.DeepCopy()
	updated.Status = status
	if err := r.Client.Status().Update(ctx, updated); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	r.written.Store(req.NamespacedName, writtenStatus{from: cp.ResourceVersion, status: status})
	r.own.Store(req.NamespacedName, ev.own)
	return requeue, nil
}

// sameEvaluation reports whether a new evaluation says what the status says
// already, for the same generation (transition times and lastEvaluated aside).
func sameEvaluation(old, fresh policyv1.ConfigurationPolicyStatus) bool {
	if old.LastEvaluatedGeneration != fresh.LastEvaluatedGeneration || old.ComplianceState != fresh.ComplianceState ||
		len(old.CompliancyDetails) != len(fresh.CompliancyDetails) ||
		!equality.Semantic.DeepEqual(old.RelatedObjects, fresh.RelatedObjects) {
		return false
	}
	for i := range old.CompliancyDetails {
		o, f := old.CompliancyDetails[i], fresh.CompliancyDetails[i]
		if o.ComplianceState != f.ComplianceState || len(o.Conditions) != len(f.Conditions) {
			return false
		}
		for j := range o.Conditions {
			if !configpolicy.SameCondition(o.Conditions[j], f.Conditions[j]) {
				return false
			}
		}
	}
	return true
}
