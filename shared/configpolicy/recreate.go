package configpolicy

import (
	"fmt"
	"slices"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// UpdateMethod is how enforce writes an object that needs an update.
type UpdateMethod string

const (
	// UpdateInPlace updates the object.
	UpdateInPlace UpdateMethod = "update"
	// UpdateByRecreating deletes the object and creates it from its
	// definition.
	UpdateByRecreating UpdateMethod = "recreate"
	// UpdateRefused writes nothing: the API server refuses the update and
	// recreateOption does not allow recreating.
	UpdateRefused UpdateMethod = "refused"
)

// HowToUpdate is how enforce writes an object that needs an update, for
// spec.object-templates[].recreateOption opt (unset is None), given whether
// the API server refuses the update as invalid (a dry-run update said so:
// typically an immutable field changes), as OCM decides: Always recreates;
// IfRequired recreates when the update is refused and updates otherwise; None
// updates, and writes nothing when the update is refused.
func HowToUpdate(opt policyv1.RecreateOption, refused bool) UpdateMethod {
	switch {
	case opt == policyv1.RecreateAlways:
		return UpdateByRecreating
	case !refused:
		return UpdateInPlace
	case opt == policyv1.RecreateIfRequired:
		return UpdateByRecreating
	default:
		return UpdateRefused
	}
}

// recreateTimedOut is the part of RecreateTimeoutMessage that AwaitsRecreate
// looks for.
const recreateTimedOut = "timed out waiting for the object to delete during recreate"

// objectPrefix names an object at the start of OCM's messages about it:
// "configmaps [a] in namespace x".
func objectPrefix(resource, namespace, name string) string {
	s := resource + " [" + name + "]"
	if namespace != "" {
		s += " in namespace " + namespace
	}
	return s
}

// ImmutableMessage is the violation of an enforced object whose update the
// API server refuses while recreateOption is None (OCM's wording).
func ImmutableMessage(resource, namespace, name string) string {
	return objectPrefix(resource, namespace, name) + ` cannot be updated, likely due to immutable fields not matching, ` +
		`you may set spec["object-templates"][].recreateOption to recreate the object`
}

// RecreateTimeoutMessage is the violation of an object deleted to be
// recreated that was still there after the attempts to create it again
// (OCM's wording): the policy is evaluated again at once (AwaitsRecreate).
func RecreateTimeoutMessage(resource, namespace, name string) string {
	return objectPrefix(resource, namespace, name) + " " + recreateTimedOut + ", will retry on the next policy evaluation"
}

// RecreateDeleteFailedMessage is the violation of an object that could not be
// deleted to be recreated (OCM's wording).
func RecreateDeleteFailedMessage(resource, namespace, name string, err error) string {
	return fmt.Sprintf("%s failed to delete when recreating with the error %v", objectPrefix(resource, namespace, name), err)
}

// RecreateFailedMessage is the violation of an object deleted to be
// recreated that could not be created again (OCM's wording).
func RecreateFailedMessage(resource, namespace, name string, err error) string {
	return fmt.Sprintf("%s failed to recreate with the error `%v`", objectPrefix(resource, namespace, name), err)
}

// AwaitsRecreate reports whether an evaluation's messages say an object is
// still being deleted to be recreated: OCM then evaluates the policy again at
// once rather than after its evaluation interval.
func AwaitsRecreate(messages []string) bool {
	return slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, recreateTimedOut) })
}
