package configpolicy

import (
	"fmt"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// PruneFinalizer holds a ConfigurationPolicy whose pruneObjectBehavior is
// DeleteIfCreated or DeleteAll until the objects it must delete are gone
// (OCM's name for it).
const PruneFinalizer = "policy.open-cluster-management.io/delete-related-objects"

// ReasonCleanupError is the condition reason of a ConfigurationPolicy whose
// objects could not all be deleted (OCM's wording).
const ReasonCleanupError = "Error cleaning up child objects"

// CarryCreatedByPolicy returns fresh (a new evaluation's relatedObjects) with
// what old (the status's) knew of who created each object: an object the
// policy created earlier and did not create again in this evaluation keeps
// createdByPolicy and the uid it had when the policy created it. So an object
// deleted and then recreated by someone else keeps the policy's old uid, which
// no longer matches it, and DeleteIfCreated leaves it alone. Entries without
// properties (mustnothave objects, objects not found) carry nothing. Neither
// argument is modified.
func CarryCreatedByPolicy(old, fresh []policyv1.RelatedObject) []policyv1.RelatedObject {
	if fresh == nil {
		return nil
	}
	out := make([]policyv1.RelatedObject, len(fresh))
	for i := range fresh {
		out[i] = *fresh[i].DeepCopy()
		props := out[i].Properties
		if props == nil || createdByPolicy(out[i]) {
			continue
		}
		for _, o := range old {
			if o.Object == out[i].Object && createdByPolicy(o) {
				props.CreatedByPolicy = new(bool)
				*props.CreatedByPolicy = true
				props.UID = o.Properties.UID
				break
			}
		}
	}
	return out
}

func createdByPolicy(ro policyv1.RelatedObject) bool {
	return ro.Properties != nil && ro.Properties.CreatedByPolicy != nil && *ro.Properties.CreatedByPolicy
}

// PruneCandidates returns the related objects a ConfigurationPolicy may have
// to delete now, as OCM decides: none unless spec enforces and its
// pruneObjectBehavior is DeleteIfCreated or DeleteAll; while the policy is
// being deleted, every object of old (its status's relatedObjects); otherwise
// the objects of old that fresh (the evaluation just made) no longer lists,
// because the spec or the selected namespaces changed. Only objects the policy
// saw on the cluster as a musthave or mustonlyhave object (an entry with a
// uid) are candidates: mustnothave objects and objects it did not find are
// never deleted. DecidePrune says, for each, whether to delete it.
func PruneCandidates(spec policyv1.ConfigurationPolicySpec, old, fresh []policyv1.RelatedObject, deleting bool) []policyv1.RelatedObject {
	if !spec.RemediationAction.IsEnforce() || !spec.PruneObjectBehavior.Prunes() {
		return nil
	}
	var out []policyv1.RelatedObject
	for _, o := range old {
		if o.Properties == nil || o.Properties.UID == "" {
			continue
		}
		if !deleting && lists(fresh, o.Object) {
			continue
		}
		out = append(out, o)
	}
	return out
}

func lists(related []policyv1.RelatedObject, obj policyv1.ObjectResource) bool {
	for _, r := range related {
		if r.Object == obj {
			return true
		}
	}
	return false
}

// LiveObject is what the cluster holds now under a related object's name.
type LiveObject struct {
	// Found is false when no such object exists.
	Found bool
	// UID is the object's metadata.uid.
	UID string
	// Deleting is true when its deletion has begun (deletionTimestamp set).
	Deleting bool
}

// PruneAction is what to do with one candidate.
type PruneAction string

const (
	// PruneKeep leaves the object alone (or it is gone already).
	PruneKeep PruneAction = ""
	// PruneDelete deletes the object (with its uid as a precondition).
	PruneDelete PruneAction = "delete"
	// PruneAwait waits: the object is already being deleted and is still
	// there, which counts as a failure until it is gone.
	PruneAwait PruneAction = "await"
)

// DecidePrune decides about one candidate of PruneCandidates given the object
// the cluster holds under its name now: DeleteAll deletes it whatever its
// uid; DeleteIfCreated only when the policy created it (createdByPolicy) and
// its uid is the one the policy created, never an object recreated by
// someone else. None, or anything else, keeps it.
func DecidePrune(b policyv1.PruneObjectBehavior, ro policyv1.RelatedObject, live LiveObject) PruneAction {
	if !live.Found {
		return PruneKeep
	}
	switch b {
	case policyv1.PruneDeleteAll:
	case policyv1.PruneDeleteIfCreated:
		if !createdByPolicy(ro) || ro.Properties.UID == "" || ro.Properties.UID != live.UID {
			return PruneKeep
		}
	default:
		return PruneKeep
	}
	if live.Deleting {
		return PruneAwait
	}
	return PruneDelete
}

// PruneFailure is an object that could not be deleted, and why.
type PruneFailure struct {
	Object policyv1.ObjectResource
	Why    string
}

// CleanupMessage is the status message of the failures: "Failed to delete
// objects: ConfigMap "a" in namespace ns (why), ...".
func CleanupMessage(failures []PruneFailure) string {
	parts := make([]string, len(failures))
	for i, f := range failures {
		s := fmt.Sprintf("%s %q", f.Object.Kind, f.Object.Metadata.Name)
		if ns := f.Object.Metadata.Namespace; ns != "" {
			s += " in namespace " + ns
		}
		if f.Why != "" {
			s += " (" + f.Why + ")"
		}
		parts[i] = s
	}
	return "Failed to delete objects: " + strings.Join(parts, ", ")
}

// CreatedWithUID reports whether related (a status's relatedObjects) says the
// policy created the object whose uid is uid: an object recreated by the
// policy (recreateOption) stays created by the policy when the one it
// replaces was, as OCM keeps it.
func CreatedWithUID(related []policyv1.RelatedObject, uid string) bool {
	for _, o := range related {
		if uid != "" && createdByPolicy(o) && o.Properties.UID == uid {
			return true
		}
	}
	return false
}
