package operatorpolicy

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// Spelling is which of the two accepted spellings an OperatorPolicy is written
// in. It decides only what deleting the policy does (see OnDeletion).
type Spelling string

const (
	// SpellingFleetpolicy is fleetpolicy's own (fields OCM does not have):
	// deleting the policy removes its operator per removalBehavior.
	SpellingFleetpolicy Spelling = "fleetpolicy"
	// SpellingOCM is the one OCM v0.19 shipped: deleting the policy removes
	// nothing; only complianceType mustnothave removes.
	SpellingOCM Spelling = "OCM"
)

// SpellingOf decides the spelling of spec. A policy is in fleetpolicy's spelling
// when it sets at least one field only fleetpolicy has — allowedCSVs,
// statusConfig, subscription.installPlanApproval, operatorGroup.target,
// removalBehavior.installPlans or removalBehavior.apiServiceDefinitions — and
// no field only OCM has — complianceType, upgradeApproval, versions,
// complianceConfig, operatorGroup.targetNamespaces or operatorGroup.selector.
// Every other policy, including one that sets neither kind or mixes both, is
// in OCM's spelling: when in doubt, deleting a policy uninstalls nothing.
func SpellingOf(spec *v1beta1.OperatorPolicySpec) Spelling {
	if len(fleetpolicyOnlyFields(spec)) > 0 && len(ocmOnlyFields(spec)) == 0 {
		return SpellingFleetpolicy
	}
	return SpellingOCM
}

// fleetpolicyOnlyFields names the fields set in spec that only fleetpolicy's spelling has.
func fleetpolicyOnlyFields(spec *v1beta1.OperatorPolicySpec) []string {
	return setFields(map[string]bool{
		fieldAllowedCSVs.String():                    spec.AllowedCSVs != nil,
		"spec.statusConfig":                          spec.StatusConfig != nil,
		fieldInstallPlanApproval.String():            spec.Subscription.InstallPlanApproval != "",
		"spec.operatorGroup.target":                  spec.OperatorGroup != nil && spec.OperatorGroup.Target != nil,
		"spec.removalBehavior.installPlans":          spec.RemovalBehavior.InstallPlans != "",
		"spec.removalBehavior.apiServiceDefinitions": spec.RemovalBehavior.APIServiceDefinitions != "",
	})
}

// FleetpolicyOnly names what op sets that only fleetpolicy's OperatorPolicy
// controller understands and OCM's config-policy-controller v0.19 would
// ignore: the fields only fleetpolicy's spelling has and the AnnotationOnDeletion
// annotation (sorted, the annotation last). A spoke that leaves OperatorPolicies
// to OCM's controller refuses a template that sets any of them.
func FleetpolicyOnly(op *v1beta1.OperatorPolicy) []string {
	fields := fleetpolicyOnlyFields(&op.Spec)
	if _, set := op.Annotations[AnnotationOnDeletion]; set {
		fields = append(fields, "metadata.annotations["+AnnotationOnDeletion+"]")
	}
	return fields
}

// ocmOnlyFields names the fields set in spec that only OCM's spelling has.
func ocmOnlyFields(spec *v1beta1.OperatorPolicySpec) []string {
	return setFields(map[string]bool{
		"spec.complianceType":            spec.ComplianceType != "",
		fieldUpgradeApproval.String():    spec.UpgradeApproval != "",
		fieldVersions.String():           spec.Versions != nil,
		"spec.complianceConfig":          spec.ComplianceConfig != nil,
		fieldOGTargetNamespaces.String(): spec.OperatorGroup != nil && spec.OperatorGroup.TargetNamespaces != nil,
		fieldOGSelector.String():         spec.OperatorGroup != nil && spec.OperatorGroup.Selector != nil,
	})
}

// setFields are the fields of isSet that are set, sorted.
func setFields(isSet map[string]bool) []string {
	var set []string
	for field, ok := range isSet {
		if ok {
			set = append(set, field)
		}
	}
	slices.Sort(set)
	return set
}

// OnDeletion says which deletions of an enforcing OperatorPolicy remove its
// operator per removalBehavior.
type OnDeletion string

const (
	// RemoveNever: deleting the policy removes nothing (OCM's spelling).
	RemoveNever OnDeletion = "Never"
	// RemoveOnUserDeletion: a deletion the spoke did not make for a transient
	// reason removes the operator (fleetpolicy's spelling): see DeletionCause.
	RemoveOnUserDeletion OnDeletion = "UserDeletion"
	// RemoveAlways: every deletion removes the operator, including the spoke's
	// own for a transient reason. Only the annotation asks for it.
	RemoveAlways OnDeletion = "Always"
)

// AnnotationOnDeletion on an OperatorPolicy overrides what its spelling says
// deleting it does: Never, UserDeletion or Always (any capitalisation).
const AnnotationOnDeletion = "operatorpolicy.fleetpolicy.io/remove-on-deletion"

// onDeletion is AnnotationOnDeletion when set, else the spelling's default.
func (n *normalizer) onDeletion(annotations map[string]string, spec *v1beta1.OperatorPolicySpec) OnDeletion {
	value, set := annotations[AnnotationOnDeletion]
	if !set {
		if SpellingOf(spec) == SpellingFleetpolicy {
			return RemoveOnUserDeletion
		}
		return RemoveNever
	}
	for _, o := range []OnDeletion{RemoveNever, RemoveOnUserDeletion, RemoveAlways} {
		if strings.EqualFold(value, string(o)) {
			return o
		}
	}
	n.fail(field.NotSupported(field.NewPath("metadata", "annotations").Key(AnnotationOnDeletion), value,
		[]OnDeletion{RemoveNever, RemoveOnUserDeletion, RemoveAlways}))
	return RemoveNever
}

// DeletionCause is why a policy template was deleted, as far as the managed
// cluster can tell.
type DeletionCause string

const (
	// DeletedByUser: nothing says the spoke deleted it for a transient reason;
	// someone deleted the object itself.
	DeletedByUser DeletionCause = ""
	// DeletedDependenciesUnsatisfied: template sync deleted it because a
	// dependency of its template stopped being satisfied (the template turned
	// Pending). Transient.
	DeletedDependenciesUnsatisfied DeletionCause = "DependenciesUnsatisfied"
	// DeletedPolicyGone: the policy holding the template left the managed
	// cluster — the root was deleted or disabled, or the cluster left the
	// placement or a rollout; the managed cluster cannot tell these apart.
	// Template sync deleted it, or the garbage collector did because its owner
	// Policy is gone. Transient.
	DeletedPolicyGone DeletionCause = "PolicyGone"
	// DeletedTemplateRemoved: template sync deleted it because the policy,
	// which is still there, no longer holds the template and none of its
	// templates is in error: the policy's author removed it.
	DeletedTemplateRemoved DeletionCause = "TemplateRemoved"
	// DeletedTemplateError: template sync deleted it while a template of its
	// policy is in error (a hub template the hub could not resolve, a kind not
	// installed, an undecodable template): it may be this one, unapplied until
	// the error goes. Transient.
	DeletedTemplateError DeletionCause = "TemplateError"
)

// AnnotationDeletionCause is written by the spoke's template sync on a template
// just before it deletes it: the DeletionCause. Any other value counts as
// transient.
const AnnotationDeletionCause = "fleetpolicy.io/deletion-cause"

// CauseOfDeletion is why a template being deleted was deleted: the cause
// template sync wrote in AnnotationDeletionCause, else DeletedPolicyGone when
// the Policy owning it is gone (the garbage collector deleted it), else
// DeletedByUser.
func CauseOfDeletion(annotations map[string]string, ownerPolicyGone bool) DeletionCause {
	if cause, marked := annotations[AnnotationDeletionCause]; marked {
		switch c := DeletionCause(cause); c {
		case DeletedDependenciesUnsatisfied, DeletedPolicyGone, DeletedTemplateRemoved, DeletedTemplateError:
			return c
		}
		return DeletedPolicyGone // unknown: treated as transient
	}
	if ownerPolicyGone {
		return DeletedPolicyGone
	}
	return DeletedByUser
}

// Transient reports whether a deletion for cause may be undone by the spoke
// itself (the template comes back when the dependency or the policy does).
func (c DeletionCause) Transient() bool {
	return c != DeletedByUser && c != DeletedTemplateRemoved
}

// RemovesOnDeletion reports whether deleting p for cause removes its operator:
// only an enforcing policy does, with RemoveAlways always and with
// RemoveOnUserDeletion when the cause is not transient.
func RemovesOnDeletion(p Policy, cause DeletionCause) bool {
	if !p.Enforce {
		return false
	}
	switch p.OnDeletion {
	case RemoveAlways:
		return true
	case RemoveOnUserDeletion:
		return !cause.Transient()
	}
	return false
}

// HoldsFinalizer reports whether p needs a finalizer so that its deletion can
// remove the operator: an enforcing musthave policy some deletion removes.
func HoldsFinalizer(p Policy) bool {
	return p.Enforce && !p.Remove && p.OnDeletion != RemoveNever
}
