package configpolicy

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// ownWrites are the objects a ConfigurationPolicy's evaluations created or
// updated, at its generation: each object's resourceVersion after the write
// and the reason the evaluation gave ("was created successfully", "was
// updated successfully").
//
// An evaluation that finds such an object still at that resourceVersion
// finds exactly what the policy wrote and keeps that reason, rather than
// saying "found as specified": the watch of the object sends the policy its
// own write back, and that evaluation would otherwise be a new compliance
// event and four more writes (the ConfigurationPolicy's status, the
// Policy's on both clusters, an Event on the hub) for every object the
// policy makes, trailing the fleet's convergence. OCM's controller does say
// it again.
type ownWrites struct {
	generation int64
	previous   map[string]ownWrite
	// current are the writes this evaluation made or found standing.
	current map[string]ownWrite
}

type ownWrite struct {
	resourceVersion string
	reason          configpolicy.Reason
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

func ownWriteKey(obj *unstructured.Unstructured) string {
	return obj.GroupVersionKind().String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// standing reports the reason the policy gave when it wrote obj, if obj is
// still at the resourceVersion of that write, and keeps it.
func (w *ownWrites) standing(obj *unstructured.Unstructured) (configpolicy.Reason, bool) {
	if w == nil || obj == nil {
		return "", false
	}
	prev, ok := w.previous[ownWriteKey(obj)]
	if !ok || prev.resourceVersion != obj.GetResourceVersion() {
		return "", false
	}
	w.current[ownWriteKey(obj)] = prev
	return prev.reason, true
}

// wrote records that the evaluation created or updated obj (as the API
// server answered the write) for reason.
func (w *ownWrites) wrote(obj *unstructured.Unstructured, reason configpolicy.Reason) {
	if w != nil && obj != nil && obj.GetResourceVersion() != "" {
		w.current[ownWriteKey(obj)] = ownWrite{resourceVersion: obj.GetResourceVersion(), reason: reason}
	}
}
