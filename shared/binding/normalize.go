package binding

import (
	"errors"
	"fmt"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// JSON paths of the override fields, as errors name them.
const (
	fieldOCMAction = "bindingOverrides.remediationAction"
	fieldOCMFilter = "subFilter"
	fieldOwnAction = "remediationActionOverride.remediationAction"
	fieldOwnFilter = "remediationActionOverride.subFilter"
)

// Override is a PlacementBinding's selective-enforcement override, whichever
// spelling it was written in.
type Override struct {
	// Enforce is true when the binding overrides the remediationAction to enforce.
	Enforce bool
	// Restricted is true when the binding only narrows the override to clusters
	// that non-restricted bindings bind; it never binds a cluster itself.
	Restricted bool
}

// FieldError reports override fields of a PlacementBinding that cannot be normalised.
type FieldError struct {
	// Binding is the binding as namespace/name (name alone when it has no namespace).
	Binding string
	// Fields are the JSON paths of the offending fields.
	Fields []string
	// Reason says what is wrong with them.
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("PlacementBinding %s: %s: %s", e.Binding, strings.Join(e.Fields, ", "), e.Reason)
}

// Normalize returns pb's override from either spelling: OCM's
// bindingOverrides.remediationAction + subFilter: restricted, or fleetpolicy's own
// remediationActionOverride{remediationAction, subFilter}. A remediationAction may
// only be enforce (any capitalisation) or unset, and OCM's subFilter only
// restricted or unset. When both spellings set the same setting they must agree.
// Every problem found is returned, joined, as a *FieldError.
func Normalize(pb *policyv1.PlacementBinding) (Override, error) {
	if pb == nil {
		return Override{}, errors.New("nil PlacementBinding")
	}
	ref := bindingRef(pb)
	var errs []error
	fail := func(reason string, fields ...string) {
		errs = append(errs, &FieldError{Binding: ref, Fields: fields, Reason: reason})
	}

	ocmAction := pb.BindingOverrides.RemediationAction
	ocmEnforce := isEnforce(ocmAction)
	if ocmAction != "" && !ocmEnforce {
		fail(fmt.Sprintf("unsupported value %q: only enforce can override", ocmAction), fieldOCMAction)
	}
	ocmRestricted := pb.SubFilter == policyv1.Restricted
	if pb.SubFilter != "" && !ocmRestricted {
		fail(fmt.Sprintf("unsupported value %q: only %s is allowed", pb.SubFilter, policyv1.Restricted), fieldOCMFilter)
	}
	override := Override{Enforce: ocmEnforce, Restricted: ocmRestricted}

	if own := pb.RemediationActionOverride; own != nil {
		ownEnforce := isEnforce(own.RemediationAction)
		if own.RemediationAction != "" && !ownEnforce {
			fail(fmt.Sprintf("unsupported value %q: only enforce can override", own.RemediationAction), fieldOwnAction)
		}
		if own.RemediationAction != "" && ocmAction != "" && !strings.EqualFold(own.RemediationAction, ocmAction) {
			fail(fmt.Sprintf("disagree (%q and %q)", own.RemediationAction, ocmAction), fieldOwnAction, fieldOCMAction)
		}
		if own.SubFilter != nil && pb.SubFilter != "" && *own.SubFilter != ocmRestricted {
			fail(fmt.Sprintf("disagree (%t and %q)", *own.SubFilter, pb.SubFilter), fieldOwnFilter, fieldOCMFilter)
		}
		override.Enforce = override.Enforce || ownEnforce
		override.Restricted = override.Restricted || (own.SubFilter != nil && *own.SubFilter)
	}

	if len(errs) > 0 {
		return Override{}, errors.Join(errs...)
	}
	return override, nil
}

func isEnforce(action string) bool { return policyv1.RemediationAction(action).IsEnforce() }

func bindingRef(pb *policyv1.PlacementBinding) string {
	if pb.Namespace == "" {
		return pb.Name
	}
	return pb.Namespace + "/" + pb.Name
}
