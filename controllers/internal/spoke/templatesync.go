package spoke

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/compliance"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Labels and annotations of templates on the managed cluster.
const (
	// labelPolicyType on a CRD marks its kind as a policy template kind.
	labelPolicyType    = "policy.open-cluster-management.io/policy-type"
	policyTypeTemplate = "template"
	// annotationTemplateHash is the digest of the template as template sync
	// wrote it, so that a change of the policy is told from API defaulting.
	annotationTemplateHash = "fleetpolicy.io/template-hash"
)

// retryMissingKind is how long a template whose kind is not installed waits
// before template sync looks again.
const retryMissingKind = 15 * time.Second

// TemplateSync reconciles the copies of replicated policies on the managed
// cluster: it creates, updates or deletes each policy template as its
// dependencies allow (template sync), and reports the templates' compliance
// and compliance events in the policy's status (status sync; HubStatusSync
// copies it to the hub).
type TemplateSync struct {
	Client    client.Client // the managed cluster
	Mapper    meta.RESTMapper
	Namespace string // the cluster namespace

	// ocmEvaluatesOperatorPolicies is set when OCM's config-policy-controller
	// evaluates the OperatorPolicies (EvaluatorOCM): a template setting what
	// only fleetpolicy's controller understands is a template error.
	ocmEvaluatesOperatorPolicies bool

	events   *eventWriter
	registry *registry
	watches  *watcher
	// emitted holds, per policy UID and template (emittedKey), the last
	// compliance event template sync wrote, for as long as the template is
	// blocked: the event may not be in the cache yet.
	emitted sync.Map
}

// templateResult is what template sync found for one template.
type templateResult struct {
	// name is the template's name, as its compliance events name it.
	name string
	meta metav1.ObjectMeta
	// state is the template's compliance.
	state policyv1.ComplianceState
	// event is the compliance event template sync reports itself (a Pending
	// template or a template error); empty when the template's own controller
	// reports.
	event string
	// settled is true when state describes the policy's current generation.
	settled bool
	// retryAfter asks for another look after that long.
	retryAfter time.Duration
	// waits are the targets the template waits for.
	waits []dependency.Ref
	// key identifies the template object that should exist; nil if none.
	key *templateKey
	// failed is true for a template error.
	failed bool
	// deleted identifies the template object syncTemplate deleted because its
	// dependencies are not met; nil if none.
	deleted *templateKey
	// pending is true for a template Pending on unmet dependencies: its event
	// names the dependency cycle through the policy, when there is one.
	pending bool
}

// templateKey identifies a template object.
type templateKey struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

// Reconcile syncs one policy's templates and reports its status.
func (t *TemplateSync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &policyv1.Policy{}
	if err := t.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		t.registry.forget(req.Name)
		t.forgetEmitted(req.Name)
		return ctrl.Result{}, t.prune(ctx, req.Name, nil, operatorpolicy.DeletedPolicyGone)
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	results := make([]templateResult, len(p.Spec.PolicyTemplates))
	keep := map[templateKey]bool{}
	var targets []dependency.Ref
	var errs []error
	var result ctrl.Result
	for i := range p.Spec.PolicyTemplates {
		r, err := t.syncTemplate(ctx, p, i)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy %s %s: %w", req.NamespacedName, templateField(i), err))
		}
		results[i] = r
		if r.key != nil {
			keep[*r.key] = true
		}
		if r.deleted != nil {
			// syncTemplate deleted it, saying why: prune must not say otherwise.
			keep[*r.deleted] = true
		}
		targets = append(targets, r.waits...)
		if r.retryAfter > 0 && (result.RequeueAfter == 0 || r.retryAfter < result.RequeueAfter) {
			result.RequeueAfter = r.retryAfter
		}
	}
	t.registry.record(p.Name, targets)
	if len(errs) > 0 {
		// Try again before pruning (a template whose sync failed may still be
		// wanted) and before reporting (its state is not known).
		return result, errors.Join(errs...)
	}
	if err := t.nameCycle(ctx, p, results); err != nil {
		return result, fmt.Errorf("policy %s: %w", req.NamespacedName, err)
	}
	// A template in error is not applied, and the one applied before goes: that
	// deletion, like any while a template is in error, is not the author's.
	cause := operatorpolicy.DeletedTemplateRemoved
	if slices.ContainsFunc(results, func(r templateResult) bool { return r.failed }) {
		cause = operatorpolicy.DeletedTemplateError
	}
	if err := t.prune(ctx, p.Name, keep, cause); err != nil {
		return result, err
	}
	return result, t.report(ctx, p, results)
}

func templateField(i int) string { return fmt.Sprintf("spec.policy-templates[%d]", i) }

// nameCycle adds to the event of each template of p Pending on unmet
// dependencies the dependency cycle through p, when there is one (the same
// for every template: searched once, and only when a template is Pending).
func (t *TemplateSync) nameCycle(ctx context.Context, p *policyv1.Policy, results []templateResult) error {
	if !slices.ContainsFunc(results, func(r templateResult) bool { return r.pending }) {
		return nil
	}
	path, err := t.cycleThrough(ctx, p)
	if err != nil || path == "" {
		return err
	}
	for i := range results {
		if results[i].pending {
			results[i].event += "; the dependencies form a cycle: " + path
		}
	}
	return nil
}

// syncTemplate creates, updates or deletes template number i of p. Bad input
// and API errors that a retry does not cure (invalid, forbidden) give a
// template error; the error returned is for failures worth a retry.
func (t *TemplateSync) syncTemplate(ctx context.Context, p *policyv1.Policy, i int) (templateResult, error) {
	field := templateField(i)
	tmpl := p.Spec.PolicyTemplates[i]
	resolved, terr := t.resolve(ctx, tmpl, field, i)
	if terr != nil {
		return terr.outcome()
	}
	key, def := resolved.key, resolved.def
	fail := func(what string, err error) (templateResult, error) {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) {
			return templateErrorResult(key.name, key.namespace, fmt.Sprintf("%s.objectDefinition: %s: %v", field, what, err)), nil
		}
		return unknownResult(key.name), err
	}

	reqs, issues := dependency.Requirements(p, i, nil)
	if len(issues) > 0 {
		msgs := make([]string, len(issues))
		for j, is := range issues {
			msgs[j] = is.Problem.Error() // the policy is the template's own
		}
		return templateErrorResult(key.name, key.namespace, strings.Join(msgs, "; ")), nil
	}
	waits := make([]dependency.Ref, len(reqs))
	for j, req := range reqs {
		waits[j] = req.Target
	}
	observed, err := t.observe(ctx, reqs)
	if err != nil {
		return fail("a dependency cannot be read", err)
	}
	gate := dependency.Evaluate(reqs, tmpl.IgnorePending, observed)

	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(key.gvk)
	err = t.Client.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return fail("the template cannot be read", err)
	}
	found := err == nil
	if owner := existing.GetLabels()[replication.LabelPolicy]; found && owner != p.Name {
		if owner == "" {
			owner = "none"
		}
		return templateErrorResult(key.name, key.namespace, fmt.Sprintf("%s.objectDefinition: %s %s already exists and belongs to another policy (%s)",
			field, key.gvk.Kind, key.name, owner)), nil
	}

	if !gate.Allowed() {
		if found {
			if err := t.deleteTemplate(ctx, existing, operatorpolicy.DeletedDependenciesUnsatisfied); err != nil {
				return fail("the template cannot be deleted", err)
			}
		}
		return templateResult{
			name: key.name, meta: templateMeta(key.namespace, key.name, nil), state: gate.Compliance(),
			event: string(gate.Compliance()) + "; " + gate.Message(), settled: true, waits: waits, deleted: &key,
			pending: gate.Compliance() == policyv1.Pending,
		}, nil
	}

	desired := t.desiredTemplate(p, def, key.namespace)
	r := templateResult{name: key.name, waits: waits, key: &key}
	switch {
	case !found:
		err := t.Client.Create(ctx, desired, client.FieldValidation("Strict"))
		if err != nil && !apierrors.IsAlreadyExists(err) { // already there: the cache was behind
			return fail("the template cannot be created", err)
		}
		r.meta = templateMeta(key.namespace, key.name, desired)
	case drifted(desired, existing):
		updated := existing.DeepCopy()
		for k, v := range desired.Object {
			if k != "metadata" && k != "status" {
				updated.Object[k] = v
			}
		}
		updated.SetLabels(desired.GetLabels())
		updated.SetAnnotations(desired.GetAnnotations())
		updated.SetOwnerReferences(desired.GetOwnerReferences())
		err := t.Client.Update(ctx, updated, client.FieldValidation("Strict"))
		switch {
		case apierrors.IsConflict(err):
			r.retryAfter = time.Second
		case err != nil:
			return fail("the template cannot be updated", err)
		}
		r.meta = templateMeta(key.namespace, key.name, existing)
		r.state = compliance.OfTemplate(dependency.Observe(existing.Object).Compliance)
	default:
		r.meta = templateMeta(key.namespace, key.name, existing)
		r.state = compliance.OfTemplate(dependency.Observe(existing.Object).Compliance)
		r.settled = evaluatedCurrent(existing)
	}
	return r, nil
}

// resolvedTemplate is a policy template ready to sync: the template object
// it makes (key) and its definition.
type resolvedTemplate struct {
	key templateKey
	def *unstructured.Unstructured
}

// templateError is why a policy template is not ready to sync: a template
// error (retry nil), reported NonCompliant in a "template-error; ..." event
// and looked at again after retryAfter when set, or a failure worth a retry
// (retry), of a template of which nothing is known yet.
type templateError struct {
	// name is the template's name, or its position when it has none.
	name, message string
	retryAfter    time.Duration
	retry         error
}

func (e *templateError) Error() string {
	if e.retry != nil {
		return e.retry.Error()
	}
	return e.message
}

// outcome is the template's result and the error syncTemplate returns.
func (e *templateError) outcome() (templateResult, error) {
	if e.retry != nil {
		return unknownResult(e.name), e.retry
	}
	r := templateErrorResult(e.name, "", e.message)
	r.retryAfter = e.retryAfter
	return r, nil
}

// resolve decodes a policy template and finds its kind on the managed
// cluster; a template not ready to sync is a templateError.
func (t *TemplateSync) resolve(ctx context.Context, tmpl *policyv1.PolicyTemplate, field string, i int) (resolvedTemplate, *templateError) {
	bad := func(name, msg string) (resolvedTemplate, *templateError) {
		return resolvedTemplate{}, &templateError{name: name, message: msg}
	}
	// A template that cannot be named reports under its position.
	unnamed := fmt.Sprintf("policy-templates-%d", i)
	if tmpl == nil {
		return bad(unnamed, field+" is empty")
	}
	def := &unstructured.Unstructured{}
	if err := def.UnmarshalJSON(tmpl.ObjectDefinition.Raw); err != nil {
		return bad(unnamed, fmt.Sprintf("%s.objectDefinition cannot be decoded: %v", field, err))
	}
	name := def.GetName()
	if name == "" {
		return bad(unnamed, field+".objectDefinition.metadata.name is required")
	}
	// A template the hub could not resolve is not applied (the one applied
	// before is removed), as OCM's framework add-on does.
	if msg, failed := templates.HubTemplateErrorMessage(def.GetAnnotations()); failed {
		// Removing it must not prune what it created: a hub template error is
		// no request to delete anything (OCM's add-on does the same).
		if err := t.disarmPruning(ctx, def.GroupVersionKind(), name); err != nil {
			return resolvedTemplate{}, &templateError{name: name, retry: err}
		}
		return bad(name, msg)
	}
	retry := func(err error) (resolvedTemplate, *templateError) {
		return resolvedTemplate{}, &templateError{name: name, retry: err}
	}
	gvk := def.GroupVersionKind()
	mapping, err := t.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return resolvedTemplate{}, &templateError{name: name, retryAfter: retryMissingKind,
			message: fmt.Sprintf("%s.objectDefinition: the kind %s of %s is not installed on the cluster", field, gvk.Kind, gvk.GroupVersion())}
	}
	if err != nil {
		return retry(err)
	}
	isTemplate, err := t.isTemplateKind(ctx, mapping.Resource.GroupResource())
	if err != nil {
		return retry(err)
	}
	if !isTemplate {
		return bad(name, fmt.Sprintf("%s.objectDefinition: %s is not a policy template kind (its CRD lacks the label %s=%s)",
			field, gvk.Kind, labelPolicyType, policyTypeTemplate))
	}
	if msg := t.unknownToOCM(mapping.GroupVersionKind.GroupKind(), tmpl.ObjectDefinition.Raw); msg != "" {
		return bad(name, fmt.Sprintf("%s.objectDefinition: %s", field, msg))
	}
	if err := t.watches.ensure(mapping.GroupVersionKind, true); err != nil {
		return retry(err)
	}
	key := templateKey{gvk: mapping.GroupVersionKind, name: name}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		key.namespace = t.Namespace
	}
	return resolvedTemplate{key: key, def: def}, nil
}

// unknownToOCM says why a template of kind gk cannot be left to OCM's
// config-policy-controller, or "": an OperatorPolicy, when OCM's controller
// evaluates them, that sets what only fleetpolicy's controller understands
// (operatorpolicy.FleetpolicyOnly). A template that does not decode as an
// OperatorPolicy is left to the API server's validation.
func (t *TemplateSync) unknownToOCM(gk schema.GroupKind, raw []byte) string {
	if !t.ocmEvaluatesOperatorPolicies || gk != (schema.GroupKind{Group: policyv1beta1.GroupVersion.Group, Kind: "OperatorPolicy"}) {
		return ""
	}
	op := &policyv1beta1.OperatorPolicy{}
	if json.Unmarshal(raw, op) != nil {
		return ""
	}
	fields := operatorpolicy.FleetpolicyOnly(op)
	if len(fields) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: only fleetpolicy's OperatorPolicy controller understands this, and OCM's config-policy-controller, "+
		"which evaluates OperatorPolicies on this cluster (--operatorpolicy-evaluator=ocm), would ignore it; write the policy in OCM's spelling",
		strings.Join(fields, ", "))
}

// disarmPruning sets spec.pruneObjectBehavior to None on the
// ConfigurationPolicy of that name the spoke synced into its namespace, if
// there is one that would prune, so that deleting it removes nothing else.
func (t *TemplateSync) disarmPruning(ctx context.Context, gvk schema.GroupVersionKind, name string) error {
	if gvk.Group != policyv1.GroupVersion.Group || gvk.Kind != "ConfigurationPolicy" {
		return nil
	}
	cp := &policyv1.ConfigurationPolicy{}
	if err := t.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: name}, cp); err != nil {
		return client.IgnoreNotFound(err)
	}
	if cp.Spec.PruneObjectBehavior == "" || cp.Spec.PruneObjectBehavior == policyv1.PruneNone {
		return nil
	}
	patch := client.MergeFrom(cp.DeepCopy())
	cp.Spec.PruneObjectBehavior = policyv1.PruneNone
	return client.IgnoreNotFound(t.Client.Patch(ctx, cp, patch))
}

// templateErrorResult is the result of a template that cannot be synced: it
// is NonCompliant and says why in a "template-error; ..." event, as OCM does.
func templateErrorResult(name, namespace, msg string) templateResult {
	return templateResult{
		name: name, meta: templateMeta(namespace, name, nil), state: policyv1.NonCompliant,
		event: "template-error; " + msg, settled: true, failed: true,
	}
}

// unknownResult is the result of a template whose sync failed for a reason
// worth a retry: nothing is known of it yet.
func unknownResult(name string) templateResult {
	return templateResult{name: name, meta: metav1.ObjectMeta{Name: name}}
}

// templateMeta is the templateMeta of a template's status details.
func templateMeta(namespace, name string, obj *unstructured.Unstructured) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: namespace, Name: name}
	if obj != nil {
		m.UID = obj.GetUID()
		m.CreationTimestamp = obj.GetCreationTimestamp()
	}
	return m
}

// isTemplateKind reports whether objects of the resource are policy
// templates: their CRD carries the policy-type=template label.
func (t *TemplateSync) isTemplateKind(ctx context.Context, gr schema.GroupResource) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := t.Client.Get(ctx, client.ObjectKey{Name: gr.String()}, crd)
	if apierrors.IsNotFound(err) {
		return false, nil // a built-in kind
	}
	if err != nil {
		return false, err
	}
	return crd.Labels[labelPolicyType] == policyTypeTemplate, nil
}

// desiredTemplate is the template object as it should be on the managed
// cluster: in the cluster namespace (when namespaced) and owned by the policy,
// labelled with the policy and the cluster, with the policy's remediationAction
// inherited as OCM's framework add-on does (replication.InheritRemediationAction).
func (t *TemplateSync) desiredTemplate(p *policyv1.Policy, def *unstructured.Unstructured, namespace string) *unstructured.Unstructured {
	d := def.DeepCopy()
	d.SetNamespace(namespace)
	labels := maps.Clone(d.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[replication.LabelPolicy] = p.Name
	labels[replication.LabelClusterName] = t.Namespace
	labels[replication.LabelClusterNamespace] = t.Namespace
	d.SetLabels(labels)
	if namespace != "" {
		d.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: policyv1.GroupVersion.String(), Kind: "Policy", Name: p.Name, UID: p.UID,
		}})
	}
	replication.InheritRemediationAction(p.Spec.RemediationAction, d.Object)
	annotations := maps.Clone(d.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationTemplateHash] = digest(d.Object)
	d.SetAnnotations(annotations)
	return d
}

// digest fingerprints a template object.
func digest(obj map[string]any) string {
	raw, _ := json.Marshal(obj) // an object decoded from JSON always encodes
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

// drifted reports whether the template on the cluster differs from the desired
// one: the policy changed it (the digest differs), or someone changed a field
// the template sets, or its owner.
func drifted(desired, existing *unstructured.Unstructured) bool {
	if existing.GetAnnotations()[annotationTemplateHash] != desired.GetAnnotations()[annotationTemplateHash] {
		return true
	}
	if len(desired.GetOwnerReferences()) > 0 && !ownedBy(existing, desired.GetOwnerReferences()[0].UID) {
		return true
	}
	return !configpolicy.Compare(desired.Object, existing.Object, policyv1.MustHave, policyv1.MustHave).Matches
}

func ownedBy(obj *unstructured.Unstructured, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// evaluatedCurrent reports whether a template's status describes its current
// generation: it has a compliance and, when it says which generation it
// evaluated (lastEvaluatedGeneration or observedGeneration), that is the current one.
func evaluatedCurrent(u *unstructured.Unstructured) bool {
	if dependency.Observe(u.Object).Compliance == "" {
		return false
	}
	status, _ := u.Object["status"].(map[string]any)
	for _, field := range []string{"lastEvaluatedGeneration", "observedGeneration"} {
		if v, ok := status[field]; ok {
			n, ok := v.(int64)
			return ok && n == u.GetGeneration()
		}
	}
	return true
}

// observe reads each requirement's target on the managed cluster. Kinds of the
// policy group whose name ends in Policy are looked up in the cluster
// namespace; a kind that is not installed counts as a missing object.
func (t *TemplateSync) observe(ctx context.Context, reqs []dependency.Requirement) (map[dependency.Ref]dependency.Observation, error) {
	out := make(map[dependency.Ref]dependency.Observation, len(reqs))
	for _, req := range reqs {
		target := req.Target
		if _, done := out[target]; done {
			continue
		}
		mapping, err := t.Mapper.RESTMapping(schema.GroupKind{Group: target.Group, Kind: target.Kind})
		if meta.IsNoMatchError(err) {
			out[target] = dependency.Observation{}
			continue
		}
		if err != nil {
			return nil, err
		}
		key := client.ObjectKey{Name: target.Name}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			key.Namespace = target.Namespace
			if key.Namespace == "" {
				key.Namespace = t.Namespace
			}
		}
		if mapping.GroupVersionKind.GroupKind() == policyv1.GroupVersion.WithKind("Policy").GroupKind() {
			p := &policyv1.Policy{}
			switch err := t.Client.Get(ctx, key, p); {
			case apierrors.IsNotFound(err):
				out[target] = dependency.Observation{}
			case err != nil:
				return nil, err
			default:
				out[target] = dependency.Observation{Found: true, Compliance: p.Status.ComplianceState}
			}
			continue
		}
		if err := t.watches.ensure(mapping.GroupVersionKind, false); err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(mapping.GroupVersionKind)
		switch err := t.Client.Get(ctx, key, u); {
		case apierrors.IsNotFound(err):
			out[target] = dependency.Observation{}
		case err != nil:
			return nil, err
		default:
			out[target] = dependency.Observe(u.Object)
		}
	}
	return out, nil
}

// prune deletes the templates labelled with policy that keep does not list
// (all of them when keep is nil), among the template kinds seen so far,
// marking them with cause.
func (t *TemplateSync) prune(ctx context.Context, policy string, keep map[templateKey]bool, cause operatorpolicy.DeletionCause) error {
	var errs []error
	for _, gvk := range t.watches.templateKinds() {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := t.Client.List(ctx, list, client.MatchingFields{indexTemplatePolicy: policy}); err != nil {
			errs = append(errs, err)
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if ns := obj.GetNamespace(); ns != "" && ns != t.Namespace {
				continue
			}
			if keep[templateKey{gvk: gvk, namespace: obj.GetNamespace(), name: obj.GetName()}] {
				continue
			}
			if err := t.deleteTemplate(ctx, obj, cause); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// deleteTemplate deletes a template after writing why on it
// (operatorpolicy.AnnotationDeletionCause), so that the template's controller
// can tell template sync's deletions, some of them transient (a dependency
// unmet, the policy gone from the cluster), from a user's: an OperatorPolicy
// keeps its operator when the cause is transient. The first cause written
// stays, and the write is conditional on the object's resourceVersion, so a
// stale copy never replaces a newer cause. A template already gone is fine.
func (t *TemplateSync) deleteTemplate(ctx context.Context, obj *unstructured.Unstructured, cause operatorpolicy.DeletionCause) error {
	if _, marked := obj.GetAnnotations()[operatorpolicy.AnnotationDeletionCause]; !marked && obj.GetDeletionTimestamp().IsZero() {
		before := obj.DeepCopy()
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[operatorpolicy.AnnotationDeletionCause] = string(cause)
		obj.SetAnnotations(annotations)
		if err := t.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	return client.IgnoreNotFound(t.Client.Delete(ctx, obj))
}

// cycleThrough returns the path of a dependency cycle through p, or ""
// (dependency.CycleThrough over the policies of the cluster namespace).
func (t *TemplateSync) cycleThrough(ctx context.Context, p *policyv1.Policy) (string, error) {
	return dependency.CycleThrough(p, dependency.ClusterPolicies{
		Get: func(name string) (*policyv1.Policy, error) {
			d := &policyv1.Policy{}
			switch err := t.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: name}, d); {
			case apierrors.IsNotFound(err):
				return nil, nil
			case err != nil:
				return nil, err
			}
			return d, nil
		},
		List: func() ([]policyv1.Policy, error) {
			list := &policyv1.PolicyList{}
			if err := t.Client.List(ctx, list, client.InNamespace(t.Namespace)); err != nil {
				return nil, err
			}
			return list.Items, nil
		},
	})
}
