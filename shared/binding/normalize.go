package binding

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Paths of the override fields, as errors name them.
var (
	fieldOCMAction = field.NewPath("bindingOverrides", "remediationAction")
	fieldOCMFilter = field.NewPath("subFilter")
	fieldOwnAction = field.NewPath("remediationActionOverride", "remediationAction")
	fieldOwnFilter = field.NewPath("remediationActionOverride", "subFilter")
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

// Normalize returns pb's override from either spelling: OCM's
// bindingOverrides.remediationAction + subFilter: restricted, or fleetpolicy's own
// remediationActionOverride{remediationAction, subFilter}. A remediationAction may
// only be enforce (any capitalisation) or unset, and OCM's subFilter only
// restricted or unset. When both spellings set the same setting they must agree.
// Every problem found is returned as a field error naming its field
// (fleetpolicy's own spelling, for a disagreement, whose detail names OCM's);
// the caller names the binding.
func Normalize(pb *policyv1.PlacementBinding) (Override, field.ErrorList) {
	if pb == nil {
		return Override{}, field.ErrorList{field.InternalError(nil, errors.New("nil PlacementBinding"))}
	}
	var errs field.ErrorList
	ocmAction := pb.BindingOverrides.RemediationAction
	ocmEnforce := isEnforce(ocmAction)
	if ocmAction != "" && !ocmEnforce {
		errs = append(errs, field.NotSupported(fieldOCMAction, ocmAction, []string{"enforce"}))
	}
	ocmRestricted := pb.SubFilter == policyv1.Restricted
	if pb.SubFilter != "" && !ocmRestricted {
		errs = append(errs, field.NotSupported(fieldOCMFilter, pb.SubFilter, []policyv1.SubFilter{policyv1.Restricted}))
	}
	override := Override{Enforce: ocmEnforce, Restricted: ocmRestricted}

	if own := pb.RemediationActionOverride; own != nil {
		ownEnforce := isEnforce(own.RemediationAction)
		if own.RemediationAction != "" && !ownEnforce {
			errs = append(errs, field.NotSupported(fieldOwnAction, own.RemediationAction, []string{"enforce"}))
		}
		if own.RemediationAction != "" && ocmAction != "" && !strings.EqualFold(own.RemediationAction, ocmAction) {
			errs = append(errs, field.Invalid(fieldOwnAction, own.RemediationAction,
				fmt.Sprintf("disagrees with %s (%q)", fieldOCMAction, ocmAction)))
		}
		if own.SubFilter != nil && pb.SubFilter != "" && *own.SubFilter != ocmRestricted {
			errs = append(errs, field.Invalid(fieldOwnFilter, *own.SubFilter,
				fmt.Sprintf("disagrees with %s (%q)", fieldOCMFilter, pb.SubFilter)))
		}
		override.Enforce = override.Enforce || ownEnforce
		override.Restricted = override.Restricted || (own.SubFilter != nil && *own.SubFilter)
	}

	if len(errs) > 0 {
		return Override{}, errs
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
