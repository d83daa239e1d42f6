package configpolicy

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// ObjectSelector returns the label selector of object template number index
// and whether the template is evaluated through it: only when objectSelector
// is set and the objectDefinition has no name (name as written; a templated
// name counts as none). A set selector with neither matchLabels nor
// matchExpressions ({}) selects every object. A malformed selector is an
// error worded as OCM words it.
func ObjectSelector(sel *metav1.LabelSelector, name string, index int) (labels.Selector, bool, error) {
	if sel == nil || name != "" {
		return nil, false, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, false, fmt.Errorf("Error parsing provided objectSelector in the object-template at index [%d]: %w", index, err)
	}
	return selector, true, nil
}

// SelectedName is the name of the object definition resolved for a selected
// object: the selected object's name when the definition has none, an error
// (OCM's words) when it names another object.
func SelectedName(resolved, selected string) (string, error) {
	if resolved != "" && resolved != selected {
		return "", fmt.Errorf("The object definition's name must match the result from the object selector after template resolution")
	}
	return selected, nil
}

// NothingSelectedMessage is the (compliant) message of an object template
// whose objectSelector selects no object of kind in any of its namespaces.
func NothingSelectedMessage(kind string) string {
	return fmt.Sprintf("No objects of kind %s were matched from the policy objectSelector", kind)
}

// Selected is an object an objectSelector selected.
type Selected struct {
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	Name      string
	// Live is the object as listed.
	Live map[string]any
	// Desired is the objectDefinition for this object (its templates, if
	// any, resolved for it).
	Desired map[string]any
}

// SelectedVerdict is the decision on one selected object.
type SelectedVerdict struct {
	// Object is the index of the object in the selected list.
	Object int
	Verdict
	// Merged is what ActionUpdate writes (nil for any other action).
	Merged map[string]any
	// Comparison is the object compared with its definition (zero for the
	// objects a mustnothave template relates without comparing).
	Comparison Comparison
}

// Selection is the outcome of an object template evaluated through its
// objectSelector.
type Selection struct {
	// Verdicts are the decisions on the selected objects the template
	// relates to, in the order they were selected. Their Results make the
	// message, unless Summary is set.
	Verdicts []SelectedVerdict
	// Summary, when set, are the results the message is made of instead.
	Summary []Result
	// NothingSelected is true when no object was selected: the template is
	// compliant with NothingSelectedMessage and relates to no object.
	NothingSelected bool
}

// JudgeSelection judges an object template through its objectSelector, as
// OCM does. selected are the objects the selector selected in the template's
// namespaces (namespaces: "" alone for a cluster-scoped kind), ct and mct
// the canonical compliance types.
//
//   - musthave and mustonlyhave: each selected object is checked as if the
//     objectDefinition named it; enforce updates those that differ. An object
//     is never created from a selector.
//   - mustnothave: the selected objects that match the objectDefinition
//     (compared as musthave) are violations, deleted on enforce; the others
//     are left out. When none matches, the template is compliant ("<resource>
//     missing as expected in namespace ...", over every namespace) and relates
//     every selected object as compliant, without a reason.
func JudgeSelection(resource string, namespaces []string, selected []Selected, ct, mct policyv1.ComplianceType, enforce bool) Selection {
	if len(selected) == 0 {
		return Selection{NothingSelected: true}
	}
	var out Selection
	for i, s := range selected {
		cmp := Compare(s.Desired, s.Live, ct, mct)
		if ct == policyv1.MustNotHave && !cmp.Matches {
			continue
		}
		v := SelectedVerdict{Object: i, Verdict: Decide(ct, true, cmp, enforce), Comparison: cmp}
		if v.Action == ActionUpdate {
			v.Merged = cmp.Merged
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	if ct != policyv1.MustNotHave || len(out.Verdicts) > 0 {
		return out
	}
	for i := range selected {
		out.Verdicts = append(out.Verdicts, SelectedVerdict{Object: i, Verdict: Verdict{Compliant: true}})
	}
	for _, ns := range namespaces {
		out.Summary = append(out.Summary, Result{Resource: resource, Namespace: ns, Compliant: true, Reason: ReasonMissingAsExpected})
	}
	return out
}
