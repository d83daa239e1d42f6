package binding

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// OverridesApply reports whether binding overrides apply under a policy's
// rollout strategy: only with type All (or unset, which means All). Any other
// type ignores them, as the rollout design says (the rollout alone decides
// where and when the policy enforces); OCM v0.19, which has no rollout
// strategy, always applies them.
func OverridesApply(strategy clusterv1alpha1.RolloutStrategy) bool {
	return strategy.Type == "" || strategy.Type == clusterv1alpha1.All
}

// IgnoredOverride is an enforce override of a binding that binds the policy
// and that the policy's rollout strategy makes ignored (OverridesApply is
// false): the binding enforces nowhere. It is a warning, not an error: the
// policy propagates as it would without the override.
type IgnoredOverride struct {
	// Binding is the PlacementBinding's name (in the policy's namespace).
	Binding string
	// Field is the override's field as the binding writes it:
	// bindingOverrides.remediationAction (OCM's spelling) or
	// remediationActionOverride.remediationAction (fleetpolicy's).
	Field *field.Path
	// Strategy is the policy's spec.rolloutStrategy.type.
	Strategy clusterv1alpha1.RolloutType
}

// Message says why the override is ignored, without naming the binding or
// its field (the caller does: a result on the field, or String).
func (o IgnoredOverride) Message() string {
	return fmt.Sprintf("enforce is ignored: the Policy's spec.rolloutStrategy.type is %s, and binding overrides apply only with All; "+
		"the rollout alone decides where the Policy enforces", o.Strategy)
}

// String names the binding and its field, for a condition or an Event on the
// Policy.
func (o IgnoredOverride) String() string {
	return fmt.Sprintf("PlacementBinding %s: %s %s", o.Binding, o.Field, o.Message())
}

// overrideField is the field pb writes its enforce override in: OCM's when it
// enforces there, fleetpolicy's otherwise.
func overrideField(pb *policyv1.PlacementBinding) *field.Path {
	if isEnforce(pb.BindingOverrides.RemediationAction) {
		return fieldOCMAction
	}
	return fieldOwnAction
}
