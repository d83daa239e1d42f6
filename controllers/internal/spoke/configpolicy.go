package spoke

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/governancemetrics"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/templatewatch"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// ConfigurationPolicyReconciler evaluates ConfigurationPolicies on the managed
// cluster: each object template is compared with the cluster (inform) or made
// true (enforce: create, update or delete), the result is written to the
// ConfigurationPolicy's status, and a compliance event about its parent Policy
// says it when the result changes. The comparison is shared/configpolicy's.
type ConfigurationPolicyReconciler struct {
	Client client.Client // cached: ConfigurationPolicies, Policies, Namespaces; writes
	Reader client.Reader // uncached: the objects the templates name, when not evaluated by watch
	Mapper meta.RESTMapper
	// Templates resolves the managed-cluster templates of the object
	// definitions and, for a policy evaluated by watch, reads and watches
	// what the policy evaluates and its templates read.
	Templates *templatewatch.Resolver

	events *eventWriter
	clock  clock.PassiveClock
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

// ownWritesOf are the own writes of cp's evaluation about to run: those of
// the evaluations before at its generation.
func (r *ConfigurationPolicyReconciler) ownWritesOf(cp *policyv1.ConfigurationPolicy) *ownWrites {
	w := &ownWrites{generation: cp.Generation, current: map[string]ownWrite{}}
	if v, ok := r.own.Load(client.ObjectKeyFromObject(cp)); ok && v.(*ownWrites).generation == cp.Generation {
		w.previous = v.(*ownWrites).current
	}
	return w
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

// writtenStatus is a status the controller wrote over the policy's
// resourceVersion from.
type writtenStatus struct {
	from   string
	status policyv1.ConfigurationPolicyStatus
}

// templateOutcome is the evaluation of one object template.
type templateOutcome struct {
	compliant bool
	message   string
	related   []policyv1.RelatedObject
	// incomplete is true when the template could not be evaluated in full
	// (bad input, an API error): its related objects may be missing some.
	incomplete bool
	// kindMissing is true when the cluster does not serve its kind.
	kindMissing bool
	// created is true when the evaluation created a missing object; before
	// is then the message as the evaluation found the cluster, before it
	// enforced (the missing object not found), and beforeCompliant its
	// verdict.
	created         bool
	before          string
	beforeCompliant bool
}

// evaluation is the outcome of evaluating every object template of a policy.
type evaluation struct {
	status    policyv1.ConfigurationPolicyStatus
	compliant bool
	// complete: every object template was evaluated in full (only then are
	// the objects it no longer relates to pruned).
	complete bool
	// kindMissing: an object template names a kind the cluster does not serve.
	kindMissing bool
	messages    []string
	// created is true when an object template created a missing object;
	// beforeMessages and beforeCompliant are then what the evaluation found
	// before it enforced (templateOutcome.before).
	created         bool
	beforeMessages  []string
	beforeCompliant bool
	// own are the objects the policy wrote that this evaluation wrote or
	// found as written.
	own *ownWrites
	// whole holds, for a policy evaluated by watch with a custom message,
	// the whole object of each related object (nil when unread).
	whole []map[string]any
}

// Reconcile evaluates one ConfigurationPolicy.
// kindConfigurationPolicy is the kind label of ConfigurationPolicies'
// governance metric.
const kindConfigurationPolicy = "ConfigurationPolicy"

func (r *ConfigurationPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
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
			if _, _, err := r.events.compliance(ctx, parent, cp.Namespace, cp.Name, before); err != nil {
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
		if _, _, err := r.events.compliance(ctx, parent, cp.Namespace, cp.Name, msg); err != nil {
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

// templating is how one evaluation resolves managed-cluster templates: the
// caching resolver and the options naming the policy as its watcher (or the
// direct resolver, for a policy not evaluated by watch), with decryption once
// the policy's key is read.
type templating struct {
	resolver templates.Resolver
	options  gotemplates.ResolveOptions
}

// templatingUnlessDisabled is the templating of an evaluation of cp, nil when
// its annotation disables templates.
func templatingUnlessDisabled(cp *policyv1.ConfigurationPolicy, res templates.Resolver, opts gotemplates.ResolveOptions) *templating {
	if templates.Disabled(cp.Annotations) {
		return nil
	}
	return &templating{resolver: res, options: opts}
}

// wholePolicyStatus is the status of a ConfigurationPolicy whose object
// templates are not evaluated one by one: one detail with the message.
func wholePolicyStatus(cp *policyv1.ConfigurationPolicy, now time.Time, compliant bool, reason, msg string) (policyv1.ConfigurationPolicyStatus, bool, []string) {
	detail := configpolicy.Detail(compliant, reason, msg, now)
	return policyv1.ConfigurationPolicyStatus{
		LastEvaluatedGeneration: cp.Generation,
		ComplianceState:         detail.ComplianceState,
		CompliancyDetails:       []policyv1.TemplateStatus{detail},
	}, compliant, []string{msg}
}

// policyViolation is the evaluation of a ConfigurationPolicy that cannot be
// evaluated at all (its key cannot be read, its object-templates-raw not
// resolved): NonCompliant with the message, nothing evaluated or applied.
// The evaluation is not complete: it prunes nothing.
func policyViolation(cp *policyv1.ConfigurationPolicy, now time.Time, reason, msg string) evaluation {
	status, compliant, messages := wholePolicyStatus(cp, now, false, reason, msg)
	return evaluation{status: status, compliant: compliant, messages: messages}
}

// evaluateAll evaluates every object template of cp (those its
// object-templates-raw makes, when set), resolving their templates with tpl
// (nil: templates are disabled) and reading the cluster with cluster.
func (r *ConfigurationPolicyReconciler) evaluateAll(ctx context.Context, cp *policyv1.ConfigurationPolicy, tpl *templating, cluster clusterReader) evaluation {
	if tpl != nil && templates.UsesDecryption(cp.Annotations) {
		key := &corev1.Secret{}
		var keyData map[string][]byte
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: templates.EncryptionKeySecret}, key)
		switch {
		case err == nil:
			keyData = key.Data
		case !apierrors.IsNotFound(err):
			return policyViolation(cp, r.clock.Now(), "Template encryption configuration error",
				fmt.Sprintf("failed to get the encryption key from Secret %s/%s: %v", cp.Namespace, templates.EncryptionKeySecret, err))
		}
		enc, err := templates.DecryptionConfig(cp.Annotations, keyData, cp.Namespace)
		if err != nil {
			return policyViolation(cp, r.clock.Now(), "Template encryption configuration error", err.Error())
		}
		tpl.options.EncryptionConfig = enc
	}
	objectTemplates := cp.Spec.ObjectTemplates
	rawSensitive := false
	if cp.Spec.ObjectTemplatesRaw != "" {
		if tpl == nil {
			return policyViolation(cp, r.clock.Now(), templates.ReasonTemplateError,
				"spec.object-templates-raw cannot be used while templates are disabled by the annotation "+templates.DisableAnnotation)
		}
		var err error
		objectTemplates, rawSensitive, err = templates.ResolveObjectTemplatesRaw(tpl.resolver, cp.Spec.ObjectTemplatesRaw, tpl.options)
		if err != nil {
			return policyViolation(cp, r.clock.Now(), templates.ReasonTemplateError, templates.ErrorMessage(err))
		}
		// Its templates are resolved: the object definitions are used as made.
		tpl = nil
	}
	if len(objectTemplates) == 0 {
		// It relates to nothing now: what it related to is pruned (as in OCM).
		status, compliant, messages := wholePolicyStatus(cp, r.clock.Now(), true, "No object templates",
			fmt.Sprintf("%s contains no object templates to check, and thus has no violations", cp.Name))
		return evaluation{status: status, compliant: compliant, complete: true, messages: messages}
	}

	enforce := cp.Spec.RemediationAction.IsEnforce()
	namespaces := &namespaceLister{reader: cluster}
	ev := evaluation{status: policyv1.ConfigurationPolicyStatus{LastEvaluatedGeneration: cp.Generation}, compliant: true, complete: true, beforeCompliant: true,
		own: r.ownWritesOf(cp)}
	status := &ev.status
	for i, ot := range objectTemplates {
		out := r.evaluate(ctx, cp, i, ot, enforce, namespaces, tpl, rawSensitive, cluster, ev.own)
		ev.compliant = ev.compliant && out.compliant
		ev.complete = ev.complete && !out.incomplete
		ev.kindMissing = ev.kindMissing || out.kindMissing
		ev.messages = append(ev.messages, out.message)
		if out.created {
			ev.created = true
			ev.beforeMessages = append(ev.beforeMessages, out.before)
			ev.beforeCompliant = ev.beforeCompliant && out.beforeCompliant
		} else {
			ev.beforeMessages = append(ev.beforeMessages, out.message)
			ev.beforeCompliant = ev.beforeCompliant && out.compliant
		}
		status.RelatedObjects = append(status.RelatedObjects, out.related...)
		state := policyv1.NonCompliant
		if out.compliant {
			state = policyv1.Compliant
		}
		status.CompliancyDetails = append(status.CompliancyDetails, configpolicy.Detail(out.compliant, string(state), out.message, r.clock.Now()))
	}
	status.ComplianceState = policyv1.NonCompliant
	if ev.compliant {
		status.ComplianceState = policyv1.Compliant
	}
	if cluster.watching() && cp.Spec.CustomMessage != (policyv1.CustomMessage{}) {
		ev.whole = wholeObjects(ctx, cluster, status.RelatedObjects)
	}
	return ev
}

// wholeObjects reads the whole object of each related object, nil for one
// that cannot be read, for a custom message of a policy evaluated by watch.
func wholeObjects(ctx context.Context, cluster clusterReader, related []policyv1.RelatedObject) []map[string]any {
	out := make([]map[string]any, len(related))
	for i, ro := range related {
		gvk := schema.FromAPIVersionAndKind(ro.Object.APIVersion, ro.Object.Kind)
		if obj, err := cluster.get(ctx, gvk, ro.Object.Metadata.Namespace, ro.Object.Metadata.Name); err == nil && obj != nil {
			out[i] = obj.Object
		}
	}
	return out
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

// evaluate evaluates object template number i of cp, enforcing it when asked.
// With tpl, the templates of its object definition are resolved first, per
// namespace when they read .ObjectNamespace, .ObjectName or .Object (as OCM
// does); a template that fails to resolve is a violation and nothing of it is
// applied. sensitive says the object templates were made by templates that
// read sensitive data (object-templates-raw): their diffs are redacted unless
// recordDiff is set.
func (r *ConfigurationPolicyReconciler) evaluate(ctx context.Context, cp *policyv1.ConfigurationPolicy, i int, ot *policyv1.ObjectTemplate, enforce bool,
	namespaces *namespaceLister, tpl *templating, sensitive bool, cluster clusterReader, own *ownWrites) templateOutcome {
	path := field.NewPath("spec", "object-templates").Index(i)
	templateField := path.String()
	violation := func(format string, args ...any) templateOutcome {
		return templateOutcome{message: fmt.Sprintf(format, args...), incomplete: true}
	}
	if ot == nil {
		return violation("%s is empty", templateField)
	}
	ct, err := configpolicy.ParseComplianceType(ot.ComplianceType, path.Child("complianceType"))
	if err != nil {
		return violation("%v", err)
	}
	mct, err := configpolicy.MetadataComplianceType(ct, ot.MetadataComplianceType, path.Child("metadataComplianceType"))
	if err != nil {
		return violation("%v", err)
	}
	raw := ot.ObjectDefinition.Raw
	// The object as written: its kind, and its name and namespace unless
	// templated (known only once resolved).
	head := &unstructured.Unstructured{}
	if err := head.UnmarshalJSON(raw); err != nil {
		return violation("%s.objectDefinition cannot be decoded: %v", templateField, err)
	}
	templated := tpl != nil && templates.HasManagedTemplate(raw)
	name, namespace := head.GetName(), head.GetNamespace()
	namespaceTemplated := templated && templates.HasManagedTemplate([]byte(namespace))
	if namespaceTemplated {
		namespace = ""
	}
	if templated && templates.HasManagedTemplate([]byte(name)) {
		name = ""
	}
	gv, err := schema.ParseGroupVersion(strings.TrimSpace(head.GetAPIVersion()))
	if err != nil {
		return violation("%s.objectDefinition.apiVersion: %v", templateField, err)
	}
	gvk := gv.WithKind(strings.TrimSpace(head.GetKind()))
	mapping, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		out := violation("%s.objectDefinition: couldn't find the resource of kind %s in %s, check that its CRD is installed: %v",
			templateField, gvk.Kind, gvk.GroupVersion(), err)
		out.kindMissing = meta.IsNoMatchError(err)
		return out
	}
	resource := mapping.Resource.Resource
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace

	targetNamespaces := []string{""}
	if namespaced {
		if namespace != "" {
			targetNamespaces = []string{namespace}
		} else {
			all, err := namespaces.list(ctx)
			if err != nil {
				return violation("%s: namespaces cannot be listed: %v", templateField, err)
			}
			targetNamespaces, err = configpolicy.SelectNamespaces(cp.Spec.NamespaceSelector, all, field.NewPath("spec", "namespaceSelector"))
			if err != nil {
				return violation("%v", err)
			}
			switch {
			case len(targetNamespaces) == 0 && namespaceTemplated:
				targetNamespaces = []string{""}
			case len(targetNamespaces) == 0:
				// A violation in OCM's words, named or not, but not a failure:
				// the policy relates to no object, and what it related to
				// before is pruned (as OCM does).
				return templateOutcome{message: configpolicy.NoNamespaceMessage(name, gvk.Kind, false)}
			}
		}
	}

	selector, selecting, err := configpolicy.ObjectSelector(ot.ObjectSelector, name, i)
	if err != nil {
		return violation("%v", err)
	}
	def := definition{index: i, field: templateField, raw: raw, head: head, templated: templated, gvk: gvk, resource: resource, namespaced: namespaced,
		namespaceSelected: !selectorEmpty(cp.Spec.NamespaceSelector), name: name,
		update: &updateRules{recreate: ot.RecreateOption, recordDiff: ot.RecordDiff, sensitive: sensitive, previous: cp.Status.RelatedObjects, own: own}}
	if selecting {
		return r.evaluateSelected(ctx, cluster, def, targetNamespaces, selector, ct, mct, enforce, tpl)
	}

	uses := templates.ContextUses(raw)
	var desired *unstructured.Unstructured
	var results []configpolicy.Result
	var related []policyv1.RelatedObject
	skipped := 0
	incomplete := false
	for _, ns := range targetNamespaces {
		var existing func() map[string]any
		if uses.Object && name != "" {
			existing = func() map[string]any { return existingObject(ctx, cluster, gvk, ns, name) }
		}
		var skip bool
		var failed *templateOutcome
		desired, skip, failed = def.forObject(tpl, desired, uses.ObjectNamespace || uses.ObjectName || uses.Object, existing, name, ns)
		if failed != nil {
			return *failed
		}
		if skip {
			skipped++
			continue
		}
		obj, err := def.placed(desired, ns)
		if err != nil {
			return violation("%v", err)
		}
		var objResults []configpolicy.Result
		var objRelated []policyv1.RelatedObject
		listed := true
		if obj.GetName() != "" {
			objResults, objRelated = r.evaluateNamed(ctx, cluster, obj, obj.GetNamespace(), resource, ct, mct, enforce, def.update)
		} else {
			objResults, objRelated, listed = r.evaluateUnnamed(ctx, cluster, obj, obj.GetNamespace(), resource, ct, mct)
		}
		results = append(results, objResults...)
		related = append(related, objRelated...)
		incomplete = incomplete || !listed
	}
	if len(results) == 0 && skipped > 0 {
		return skippedOutcome(gvk.Kind, incomplete)
	}
	out := templateOutcome{compliant: true, message: configpolicy.Describe(results), related: related, incomplete: incomplete}
	before := make([]configpolicy.Result, len(results))
	out.beforeCompliant = true
	for i, res := range results {
		out.compliant = out.compliant && res.Compliant
		before[i] = res
		if res.Compliant && res.Reason == configpolicy.ReasonCreated {
			// Before it was created, the object was not found.
			out.created = true
			before[i].Compliant, before[i].Reason = false, configpolicy.ReasonNotFound
		}
		out.beforeCompliant = out.beforeCompliant && before[i].Compliant
	}
	if out.created {
		out.before = configpolicy.Describe(before)
	}
	return out
}

// skippedOutcome is the outcome of a template whose every object was skipped
// by the skipObject template function.
func skippedOutcome(kind string, incomplete bool) templateOutcome {
	return templateOutcome{compliant: true, message: fmt.Sprintf("All objects of kind %s were skipped by the `skipObject` template function", kind),
		incomplete: incomplete}
}

// definition is the objectDefinition of one object template, as written.
type definition struct {
	index int
	field string
	raw   []byte
	// head is the objectDefinition decoded, its templates unresolved.
	head *unstructured.Unstructured
	// templated is true when it has managed-cluster templates to resolve.
	templated bool
	gvk       schema.GroupVersionKind
	// resource is the plural resource name of its kind.
	resource   string
	namespaced bool
	// namespaceSelected is true when spec.namespaceSelector selects by itself.
	namespaceSelected bool
	// name is the name as written ("" when none or templated).
	name string
	// update is how the objects it names or selects are updated and their
	// differences recorded; forObject marks it sensitive when a resolution
	// of its templates read sensitive data.
	update *updateRules
}

// forObject is the definition for the object ns/name. Without templates it
// is the definition as written. With templates, they are resolved when
// nothing was resolved yet (previous is nil) or again is true (the templates
// read the object), else previous is kept; existing, when not nil, reads the
// object for .Object. skip is true when the template called skipObject
// (obj is then nil); failed, when set, is the template's outcome.
func (d definition) forObject(tpl *templating, previous *unstructured.Unstructured, again bool, existing func() map[string]any, name, ns string) (
	obj *unstructured.Unstructured, skip bool, failed *templateOutcome) {
	switch {
	case !d.templated:
		return d.head, false, nil
	case previous != nil && !again:
		return previous, false, nil
	}
	var current map[string]any
	if existing != nil {
		current = existing()
	}
	res, err := templates.ResolveObjectDefinition(tpl.resolver, d.raw, templates.ObjectContext(current, name, ns), tpl.options)
	if err != nil {
		return nil, false, &templateOutcome{message: templates.ErrorMessage(err), incomplete: true}
	}
	if res.Skip {
		return nil, true, nil
	}
	d.update.sensitive = d.update.sensitive || res.Sensitive
	obj = &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(res.JSON); err != nil {
		return nil, false, &templateOutcome{message: fmt.Sprintf("%s.objectDefinition cannot be decoded after template resolution: %v", d.field, err),
			incomplete: true}
	}
	return obj, false, nil
}

// placed is the object desired (the definition, its templates resolved) as
// evaluated in namespace ns: white space that multi-line templates leave
// around kind, name and namespace trimmed (as OCM does), the namespace ns
// unless it sets one (none for a cluster-scoped kind). A templated namespace
// must agree with the namespace selector and must not be empty.
func (d definition) placed(desired *unstructured.Unstructured, ns string) (*unstructured.Unstructured, error) {
	obj := desired.DeepCopy()
	obj.SetKind(strings.TrimSpace(obj.GetKind()))
	obj.SetName(strings.TrimSpace(obj.GetName()))
	obj.SetNamespace(strings.TrimSpace(obj.GetNamespace()))
	if !d.namespaced {
		obj.SetNamespace("")
	} else if obj.GetNamespace() == "" {
		obj.SetNamespace(ns)
	}
	if d.templated && d.namespaced {
		if obj.GetNamespace() != ns && ns != "" && d.namespaceSelected {
			return nil, errors.New("The object definition's namespace must match the result from the namespace selector after template resolution")
		}
		if obj.GetNamespace() == "" {
			return nil, errors.New(configpolicy.NoNamespaceMessage(d.name, d.gvk.Kind, true))
		}
	}
	return obj, nil
}

// evaluateSelected evaluates an object template through its objectSelector
// (shared/configpolicy.JudgeSelection): the objects of its kind the selector
// selects in namespaces, each with the definition resolved for it.
func (r *ConfigurationPolicyReconciler) evaluateSelected(ctx context.Context, cluster clusterReader, d definition, namespaces []string, selector labels.Selector,
	ct, mct policyv1.ComplianceType, enforce bool, tpl *templating) templateOutcome {
	gvk := d.gvk
	uses := templates.ContextUses(d.raw)
	perObject := uses.Object || uses.ObjectName || uses.ObjectNamespace
	var selected []configpolicy.Selected
	var listed []*unstructured.Unstructured
	var desired *unstructured.Unstructured
	skipped := 0
	for _, ns := range namespaces {
		items, err := cluster.list(ctx, gvk, ns, selector)
		if err != nil {
			return templateOutcome{message: fmt.Sprintf("Error listing resources with provided objectSelector in the object-template at index [%d]: %v",
				d.index, err), incomplete: true}
		}
		for j := range items {
			live := &items[j]
			var skip bool
			var failed *templateOutcome
			desired, skip, failed = d.forObject(tpl, desired, perObject, func() map[string]any { return templateObject(live) }, live.GetName(), ns)
			if failed != nil {
				return *failed
			}
			if skip {
				skipped++
				continue
			}
			obj, err := d.placed(desired, live.GetNamespace())
			if err != nil {
				return templateOutcome{message: err.Error(), incomplete: true}
			}
			name, err := configpolicy.SelectedName(obj.GetName(), live.GetName())
			if err != nil {
				return templateOutcome{message: err.Error(), incomplete: true}
			}
			obj.SetName(name)
			selected = append(selected, configpolicy.Selected{Namespace: live.GetNamespace(), Name: name, Live: live.Object, Desired: obj.Object})
			listed = append(listed, live)
		}
	}
	if len(selected) == 0 && skipped > 0 {
		return skippedOutcome(gvk.Kind, false)
	}
	judged := configpolicy.JudgeSelection(d.resource, namespaces, selected, ct, mct, enforce)
	if judged.NothingSelected {
		return templateOutcome{compliant: true, message: configpolicy.NothingSelectedMessage(gvk.Kind)}
	}
	results := judged.Summary
	var related []policyv1.RelatedObject
	compliant := true
	for _, v := range judged.Verdicts {
		s, live := selected[v.Object], listed[v.Object]
		desired := &unstructured.Unstructured{Object: s.Desired}
		res := configpolicy.Result{Resource: d.resource, Namespace: s.Namespace, Name: s.Name, Compliant: v.Compliant, Reason: v.Reason}
		written, created, diff := r.settle(ctx, cluster, v.Verdict, v.Comparison, true, ct, desired, live, d.update, &res)
		compliant = compliant && res.Compliant
		if judged.Summary == nil {
			results = append(results, res)
		}
		// A mustnothave object is not the policy's (see evaluateNamed).
		if ct == policyv1.MustNotHave {
			written = nil
		}
		related = append(related, withDiff(relatedObject(desired, s.Namespace, s.Name, res, written, created), diff))
	}
	return templateOutcome{compliant: compliant, message: configpolicy.Describe(results), related: related}
}

// selectorEmpty reports whether a namespaceSelector selects nothing by itself.
func selectorEmpty(t policyv1.Target) bool {
	return len(t.Include) == 0 && len(t.Exclude) == 0 && t.MatchLabels == nil && t.MatchExpressions == nil
}

// existingObject reads the object a template describes, for its .Object; nil
// when it cannot be read.
func existingObject(ctx context.Context, cluster clusterReader, gvk schema.GroupVersionKind, ns, name string) map[string]any {
	obj, err := cluster.get(ctx, gvk, ns, name)
	if err != nil || obj == nil {
		return nil
	}
	return templateObject(obj)
}

// templateObject is obj as a template's .Object sees it: a copy without
// managedFields, which has a key that is a dot (templates cannot handle it).
func templateObject(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy().Object
	unstructured.RemoveNestedField(out, "metadata", "managedFields")
	return out
}

// evaluateNamed evaluates the object the template names in namespace ns.
func (r *ConfigurationPolicyReconciler) evaluateNamed(ctx context.Context, cluster clusterReader, desired *unstructured.Unstructured, ns, resource string,
	ct, mct policyv1.ComplianceType, enforce bool, update *updateRules) ([]configpolicy.Result, []policyv1.RelatedObject) {
	name := desired.GetName()
	existing, err := cluster.get(ctx, desired.GroupVersionKind(), ns, name)
	if err != nil {
		res := configpolicy.Result{Resource: resource, Namespace: ns, Name: name, Reason: configpolicy.Reason("cannot be read: " + err.Error())}
		return []configpolicy.Result{res}, []policyv1.RelatedObject{relatedObject(desired, ns, name, res, nil, false)}
	}
	exists := existing != nil
	var cmp configpolicy.Comparison
	if exists {
		cmp = configpolicy.Compare(desired.Object, existing.Object, ct, mct)
	}
	verdict := configpolicy.Decide(ct, exists, cmp, enforce)
	res := configpolicy.Result{Resource: resource, Namespace: ns, Name: name, Compliant: verdict.Compliant, Reason: verdict.Reason}
	if verdict.Reason == configpolicy.ReasonFoundAsSpecified {
		if reason, ok := update.own.standing(existing); ok {
			res.Reason = reason // as the policy wrote it
		}
	}
	existing, created, diff := r.settle(ctx, cluster, verdict, cmp, exists, ct, desired, existing, update, &res)
	if wrote := verdict.Action == configpolicy.ActionCreate || verdict.Action == configpolicy.ActionUpdate; wrote && res.Compliant {
		update.own.wrote(existing, res.Reason)
	}
	// A mustnothave object is not the policy's: its entry has no properties
	// (as in OCM), so pruning never deletes it.
	var uidOf *unstructured.Unstructured
	if (exists || created) && ct != policyv1.MustNotHave {
		uidOf = existing
	}
	return []configpolicy.Result{res}, []policyv1.RelatedObject{withDiff(relatedObject(desired, ns, name, res, uidOf, created), diff)}
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

// settle makes the write verdict asks for on existing (exists says whether
// it is on the cluster; cmp compares it with desired), as OCM does: an
// existing musthave or mustonlyhave object that differs is first updated
// with a dry run, whose result the diff shows (recorded as update says); an
// update the API server refuses as invalid (an immutable field) is not made,
// or is made by recreating the object when update.recreate allows it (always
// with Always). It returns the object as it is now, whether the policy
// created it and the diff to record in its related object.
func (r *ConfigurationPolicyReconciler) settle(ctx context.Context, cluster clusterReader, verdict configpolicy.Verdict, cmp configpolicy.Comparison, exists bool,
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
func (r *ConfigurationPolicyReconciler) recordDiff(ctx context.Context, recording configpolicy.DiffRecording,
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
func (r *ConfigurationPolicyReconciler) recreate(ctx context.Context, existing, desired *unstructured.Unstructured, resource string) (
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
func (r *ConfigurationPolicyReconciler) write(ctx context.Context, cluster clusterReader, action configpolicy.Action, desired, existing *unstructured.Unstructured,
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

// evaluateUnnamed evaluates a template without a name against every object of
// its kind in namespace ns: musthave is met when one matches, mustnothave when
// none does. It is never enforced, as in OCM: nothing is created, and the
// matching objects of a mustnothave are reported, not deleted. listed is false
// when the objects cannot be listed.
func (r *ConfigurationPolicyReconciler) evaluateUnnamed(ctx context.Context, cluster clusterReader, desired *unstructured.Unstructured, ns, resource string,
	ct, mct policyv1.ComplianceType) (results []configpolicy.Result, related []policyv1.RelatedObject, listed bool) {
	items, err := cluster.list(ctx, desired.GroupVersionKind(), ns, nil)
	if err != nil {
		res := configpolicy.Result{Resource: resource, Namespace: ns, Name: "*", Reason: configpolicy.Reason("cannot be listed: " + err.Error())}
		return []configpolicy.Result{res}, nil, false
	}
	compareAs := ct
	if ct == policyv1.MustNotHave {
		compareAs = policyv1.MustHave
	}
	var matching []*unstructured.Unstructured
	for i := range items {
		if configpolicy.Compare(desired.Object, items[i].Object, compareAs, mct).Matches {
			matching = append(matching, &items[i])
		}
	}
	if len(matching) == 0 {
		// Nothing matched: worded without a name, as OCM's.
		res := configpolicy.Result{Resource: resource, Namespace: ns, Unnamed: true, Reason: configpolicy.ReasonNotFound}
		if ct == policyv1.MustNotHave {
			res.Compliant, res.Reason = true, configpolicy.ReasonMissingAsExpected
		}
		return []configpolicy.Result{res}, nil, true
	}
	for _, obj := range matching {
		// As OCM's config-policy-controller: an object template without a
		// name is never enforced ("we do not support enforce on unnamed
		// templates"): a mustnothave one deletes nothing, whatever matched.
		verdict := configpolicy.Decide(ct, true, configpolicy.Comparison{Matches: true}, false)
		res := configpolicy.Result{Resource: resource, Namespace: ns, Name: obj.GetName(), Unnamed: true, Compliant: verdict.Compliant, Reason: verdict.Reason}
		results = append(results, res)
		uidOf := obj
		if ct == policyv1.MustNotHave {
			uidOf = nil
		}
		related = append(related, relatedObject(desired, ns, obj.GetName(), res, uidOf, false))
	}
	return results, related, true
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

// decrypting maps the key Secret of a namespace to the ConfigurationPolicies
// of that namespace that decrypt with it.
func (r *ConfigurationPolicyReconciler) decrypting(ctx context.Context, key client.Object) []reconcile.Request {
	list := &policyv1.ConfigurationPolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(key.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ConfigurationPolicies that decrypt", "namespace", key.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for _, cp := range list.Items {
		if templates.UsesDecryption(cp.Annotations) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cp)})
		}
	}
	return out
}

// parent returns the Policy a ConfigurationPolicy belongs to: its owner, or
// the Policy its policy label names.
func (r *ConfigurationPolicyReconciler) parent(ctx context.Context, cp *policyv1.ConfigurationPolicy) (policyRef, bool) {
	for _, ref := range cp.OwnerReferences {
		if ref.Kind == "Policy" && ref.APIVersion == policyv1.GroupVersion.String() {
			return policyRef{Namespace: cp.Namespace, Name: ref.Name, UID: ref.UID}, true
		}
	}
	name := cp.Labels[labelPolicy]
	if name == "" {
		return policyRef{}, false
	}
	p := &policyv1.Policy{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: name}, p); err != nil {
		return policyRef{}, false
	}
	return policyRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}, true
}
