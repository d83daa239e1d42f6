package configpolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

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
func (r *reconciler) evaluateAll(ctx context.Context, cp *policyv1.ConfigurationPolicy, tpl *templating, cluster clusterReader) evaluation {
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

	ev := evaluation{status: policyv1.ConfigurationPolicyStatus{LastEvaluatedGeneration: cp.Generation}, compliant: true, complete: true, beforeCompliant: true,
		own: r.ownWritesOf(cp)}
	ps := policyScope{cp: cp, cluster: cluster, namespaces: &namespaceLister{reader: cluster}, tpl: tpl, enforce: cp.Spec.RemediationAction.IsEnforce(),
		sensitive: rawSensitive, own: ev.own}
	status := &ev.status
	for i, ot := range objectTemplates {
		out := r.evaluate(ctx, ps, i, ot)
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

// ownWritesOf are the own writes of cp's evaluation about to run: those of
// the evaluations before at its generation.
func (r *reconciler) ownWritesOf(cp *policyv1.ConfigurationPolicy) *ownWrites {
	w := &ownWrites{generation: cp.Generation, current: map[string]ownWrite{}}
	if v, ok := r.own.Load(client.ObjectKeyFromObject(cp)); ok && v.(*ownWrites).generation == cp.Generation {
		w.previous = v.(*ownWrites).current
	}
	return w
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

// policyScope is one evaluation of a policy's object templates: what each
// object template's evaluation shares.
type policyScope struct {
	cp *policyv1.ConfigurationPolicy
	// cluster reads the objects evaluated; namespaces lists the cluster's
	// namespaces once for all the object templates.
	cluster    clusterReader
	namespaces *namespaceLister
	// tpl resolves the templates of the object definitions (nil: templates
	// are disabled, or were resolved already with object-templates-raw).
	tpl     *templating
	enforce bool
	// sensitive says the object templates were made by templates that read
	// sensitive data (object-templates-raw): their diffs are redacted unless
	// recordDiff is set.
	sensitive bool
	own       *ownWrites
}

// templateScope is the evaluation of one object template, as its three paths
// (named, selected and unnamed objects) share it: how the evaluation reads
// the cluster, the template's compliance types, whether the policy enforces
// and the template's object definition.
type templateScope struct {
	cluster clusterReader
	ct, mct policyv1.ComplianceType
	enforce bool
	def     *definition
}

// evaluate evaluates object template number i of the policy, enforcing it
// when asked. With ps.tpl, the templates of its object definition are
// resolved first, per namespace when they read .ObjectNamespace, .ObjectName
// or .Object (as OCM does); a template that fails to resolve is a violation
// and nothing of it is applied.
func (r *reconciler) evaluate(ctx context.Context, ps policyScope, i int, ot *policyv1.ObjectTemplate) templateOutcome {
	cp, tpl := ps.cp, ps.tpl
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
			all, err := ps.namespaces.list(ctx)
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
	def := &definition{index: i, field: templateField, raw: raw, head: head, tpl: tpl, templated: templated, gvk: gvk, resource: resource, namespaced: namespaced,
		namespaceSelected: !selectorEmpty(cp.Spec.NamespaceSelector), name: name,
		update: &updateRules{recreate: ot.RecreateOption, recordDiff: ot.RecordDiff, sensitive: ps.sensitive, previous: cp.Status.RelatedObjects, own: ps.own}}
	s := templateScope{cluster: ps.cluster, ct: ct, mct: mct, enforce: ps.enforce, def: def}
	if selecting {
		return r.evaluateSelected(ctx, s, targetNamespaces, selector)
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
			existing = func() map[string]any { return existingObject(ctx, s.cluster, gvk, ns, name) }
		}
		var skip bool
		var failed *templateOutcome
		desired, skip, failed = def.forObject(desired, uses.ObjectNamespace || uses.ObjectName || uses.Object, existing, name, ns)
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
			objResults, objRelated = r.evaluateNamed(ctx, s, obj)
		} else {
			objResults, objRelated, listed = r.evaluateUnnamed(ctx, s, obj)
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

// selectorEmpty reports whether a namespaceSelector selects nothing by itself.
func selectorEmpty(t policyv1.Target) bool {
	return len(t.Include) == 0 && len(t.Exclude) == 0 && t.MatchLabels == nil && t.MatchExpressions == nil
}

// definition is the objectDefinition of one object template, as written.
type definition struct {
	index int
	field string
	raw   []byte
	// head is the objectDefinition decoded, its templates unresolved.
	head *unstructured.Unstructured
	// tpl resolves its templates (nil: they are not resolved); templated is
	// true when it has managed-cluster templates to resolve.
	tpl       *templating
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
// (obj is then nil); failed, when set, is the template's outcome. A
// resolution that read sensitive data marks d's update rules sensitive.
func (d *definition) forObject(previous *unstructured.Unstructured, again bool, existing func() map[string]any, name, ns string) (
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
	res, err := templates.ResolveObjectDefinition(d.tpl.resolver, d.raw, templates.ObjectContext(current, name, ns), d.tpl.options)
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
func (d *definition) placed(desired *unstructured.Unstructured, ns string) (*unstructured.Unstructured, error) {
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

// evaluateNamed evaluates desired, the object the template names (in its
// namespace).
func (r *reconciler) evaluateNamed(ctx context.Context, s templateScope, desired *unstructured.Unstructured) ([]configpolicy.Result, []policyv1.RelatedObject) {
	ns, name := desired.GetNamespace(), desired.GetName()
	existing, err := s.cluster.get(ctx, desired.GroupVersionKind(), ns, name)
	if err != nil {
		res := configpolicy.Result{Resource: s.def.resource, Namespace: ns, Name: name, Reason: configpolicy.Reason("cannot be read: " + err.Error())}
		return []configpolicy.Result{res}, []policyv1.RelatedObject{relatedObject(desired, ns, name, res, nil, false)}
	}
	exists := existing != nil
	var cmp configpolicy.Comparison
	if exists {
		cmp = configpolicy.Compare(desired.Object, existing.Object, s.ct, s.mct)
	}
	verdict := configpolicy.Decide(s.ct, exists, cmp, s.enforce)
	res, ro := r.conclude(ctx, s, judged{
		desired: desired, existing: existing, verdict: verdict, cmp: cmp,
		res: configpolicy.Result{Resource: s.def.resource, Namespace: ns, Name: name, Compliant: verdict.Compliant, Reason: verdict.Reason},
	}, s.def.update.own)
	return []configpolicy.Result{res}, []policyv1.RelatedObject{ro}
}

// evaluateSelected evaluates an object template through its objectSelector
// (shared/configpolicy.JudgeSelection): the objects of its kind the selector
// selects in namespaces, each with the definition resolved for it.
func (r *reconciler) evaluateSelected(ctx context.Context, s templateScope, namespaces []string, selector labels.Selector) templateOutcome {
	d := s.def
	gvk := d.gvk
	uses := templates.ContextUses(d.raw)
	perObject := uses.Object || uses.ObjectName || uses.ObjectNamespace
	var selected []configpolicy.Selected
	var listed []*unstructured.Unstructured
	var desired *unstructured.Unstructured
	skipped := 0
	for _, ns := range namespaces {
		items, err := s.cluster.list(ctx, gvk, ns, selector)
		if err != nil {
			return templateOutcome{message: fmt.Sprintf("Error listing resources with provided objectSelector in the object-template at index [%d]: %v",
				d.index, err), incomplete: true}
		}
		for j := range items {
			live := &items[j]
			var skip bool
			var failed *templateOutcome
			desired, skip, failed = d.forObject(desired, perObject, func() map[string]any { return templateObject(live) }, live.GetName(), ns)
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
	judgement := configpolicy.JudgeSelection(d.resource, namespaces, selected, s.ct, s.mct, s.enforce)
	if judgement.NothingSelected {
		return templateOutcome{compliant: true, message: configpolicy.NothingSelectedMessage(gvk.Kind)}
	}
	results := judgement.Summary
	var related []policyv1.RelatedObject
	compliant := true
	for _, v := range judgement.Verdicts {
		sel := selected[v.Object]
		// As for a named object, a selected object found as the policy's
		// own write left it keeps that write's reason.
		res, ro := r.conclude(ctx, s, judged{
			desired: &unstructured.Unstructured{Object: sel.Desired}, existing: listed[v.Object], verdict: v.Verdict, cmp: v.Comparison,
			res: configpolicy.Result{Resource: d.resource, Namespace: sel.Namespace, Name: sel.Name, Compliant: v.Compliant, Reason: v.Reason},
		}, d.update.own)
		compliant = compliant && res.Compliant
		if judgement.Summary == nil {
			results = append(results, res)
		}
		related = append(related, ro)
	}
	return templateOutcome{compliant: compliant, message: configpolicy.Describe(results), related: related}
}

// evaluateUnnamed evaluates desired, a template without a name, against every
// object of its kind in its namespace: musthave is met when one matches, mustnothave when
// none does. It is never enforced, as in OCM: nothing is created, and the
// matching objects of a mustnothave are reported, not deleted. listed is false
// when the objects cannot be listed.
func (r *reconciler) evaluateUnnamed(ctx context.Context, s templateScope, desired *unstructured.Unstructured) (
	results []configpolicy.Result, related []policyv1.RelatedObject, listed bool) {
	ns, resource, ct := desired.GetNamespace(), s.def.resource, s.ct
	items, err := s.cluster.list(ctx, desired.GroupVersionKind(), ns, nil)
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
		if configpolicy.Compare(desired.Object, items[i].Object, compareAs, s.mct).Matches {
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
		// Its verdict asks for no write, and its own writes are not kept.
		cmp := configpolicy.Comparison{Matches: true}
		verdict := configpolicy.Decide(ct, true, cmp, false)
		res, ro := r.conclude(ctx, s, judged{
			desired: desired, existing: obj, verdict: verdict, cmp: cmp,
			res: configpolicy.Result{Resource: resource, Namespace: ns, Name: obj.GetName(), Unnamed: true, Compliant: verdict.Compliant, Reason: verdict.Reason},
		}, nil)
		results = append(results, res)
		related = append(related, ro)
	}
	return results, related, true
}
