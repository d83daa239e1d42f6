package configpolicy

import (
	"fmt"
	"path"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TerminatingNever is the namespaceSelector.terminatingInclusion that leaves
// namespaces being deleted out.
const TerminatingNever = "Never"

// Namespace is what SelectNamespaces needs to know of a namespace.
type Namespace struct {
	Name   string
	Labels map[string]string
	// Terminating is true once the namespace is being deleted.
	Terminating bool
}

// SelectNamespaces returns the names of the namespaces sel selects, sorted. A
// namespace is selected when its labels match matchLabels and matchExpressions
// (when set), its name matches one of the include patterns (when set) and none
// of the exclude patterns; a namespace being deleted only unless
// terminatingInclusion is Never. A selector without include, matchLabels and
// matchExpressions selects nothing. fieldPath is the selector's path for
// errors (spec.namespaceSelector); an error is a *field.Error.
func SelectNamespaces(sel policyv1.Target, namespaces []Namespace, fieldPath *field.Path) ([]string, error) {
	for i, p := range sel.Include {
		if _, err := path.Match(string(p), ""); err != nil {
			return nil, field.Invalid(fieldPath.Child("include").Index(i), p, "malformed pattern")
		}
	}
	for i, p := range sel.Exclude {
		if _, err := path.Match(string(p), ""); err != nil {
			return nil, field.Invalid(fieldPath.Child("exclude").Index(i), p, "malformed pattern")
		}
	}
	hasLabels := sel.MatchLabels != nil || sel.MatchExpressions != nil
	if len(sel.Include) == 0 && !hasLabels {
		return nil, nil
	}
	selector := labels.Everything()
	if hasLabels {
		ls := &metav1.LabelSelector{}
		if sel.MatchLabels != nil {
			ls.MatchLabels = *sel.MatchLabels
		}
		if sel.MatchExpressions != nil {
			ls.MatchExpressions = *sel.MatchExpressions
		}
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(ls); err != nil {
			return nil, field.Invalid(fieldPath, field.OmitValueType{}, err.Error())
		}
	}
	var out []string
	for _, ns := range namespaces {
		if ns.Terminating && sel.TerminatingInclusion == TerminatingNever {
			continue
		}
		if !selector.Matches(labels.Set(ns.Labels)) {
			continue
		}
		if len(sel.Include) > 0 && !matchesAny(sel.Include, ns.Name) {
			continue
		}
		if matchesAny(sel.Exclude, ns.Name) {
			continue
		}
		out = append(out, ns.Name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// matchesAny reports whether name matches one of the (already validated) patterns.
func matchesAny(patterns []policyv1.NonEmptyString, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(string(p), name); ok {
			return true
		}
	}
	return false
}

// NoNamespaceMessage is OCM's violation for a namespaced object template
// that ends up with no namespace: it sets none (or a templated one) and
// spec.namespaceSelector selects no namespace ("namespaced object <name> of
// kind <kind> has no namespace specified from the policy namespaceSelector
// nor the object metadata"), or, afterTemplates, its templated namespace
// resolved to none ("... has no namespace specified after template
// resolution"). name is the name as written, left out when empty (none, or
// templated). Such a template is NonCompliant and relates to no object; OCM
// does not count it a failed evaluation, so what it related to is pruned.
func NoNamespaceMessage(name, kind string, afterTemplates bool) string {
	if name != "" {
		name = " " + name
	}
	where := "from the policy namespaceSelector nor the object metadata"
	if afterTemplates {
		where = "after template resolution"
	}
	return fmt.Sprintf("namespaced object%s of kind %s has no namespace specified %s", name, kind, where)
}
