package hub

import (
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// Each replica carries its cluster's rollout status in status.rolloutStatus,
// the value the root's status[] entry for the cluster holds (ToApply,
// Progressing, Succeeded, Failed, TimeOut: the rollout design's replicated
// policy status; OCM v0.19's propagator and framework add-on have no such
// field and write nothing there). The Policy CRD has a status subresource, so
// the replica writes (create, update of the spec) cannot carry it: the hub
// sends a JSON merge patch of that one field to the replica's status
// subresource, only when the step's status differs from the cached replica's,
// right after the replica's spec write when there is one (in the same writer
// and write slot), and never again while the cache has not shown the last one
// (ownWrites). So a replica gets one small write per change of its
// rollout status, not per step: two per root generation for All (Progressing,
// then Succeeded or Failed), three for a progressive rollout (ToApply,
// Progressing, then the outcome; a cluster of the first wave skips ToApply).
// A merge patch leaves every other status field (the spoke's compliance,
// details, observedGeneration) as it is and needs no resourceVersion, so it
// never conflicts with a spoke's status write. OCM's framework add-on replaces
// the whole status of the replica with its own type, which lacks the field: the
// next reconcile writes it back (one patch per such report; the add-on
// compares only its own fields, so the two do not chase each other).

// verbRolloutStatus names the rollout status patch of a replica in the
// replicaWrites metric.
const verbRolloutStatus = "rolloutStatus"

// rolloutStatusPatch is the merge patch that sets a replica's rolloutStatus.
func rolloutStatusPatch(status policyv1.RolloutStatus) []byte {
	return []byte(`{"status":{"rolloutStatus":"` + string(status) + `"}}`)
}

// planRolloutStatus gives each replica whose cached rolloutStatus differs from
// the one the step decided for its cluster a rollout status patch: on the
// cluster's spec write when writes has one, otherwise as a write of its own.
// A replica that is neither cached nor written now (its create is in flight)
// gets none yet, nor does one whose last patch of the same status is in flight.
func (p *Propagator) planRolloutStatus(root types.NamespacedName, decided []rollout.ClusterDecision, existing map[string]*policyv1.Policy, writes []replicaWrite) []replicaWrite {
	specWrite := make(map[string]int, len(writes))
	for i, w := range writes {
		if !w.isDelete() {
			specWrite[w.cluster] = i
		}
	}
	now := p.Clock.Now()
	for _, d := range decided {
		want := d.Progress.Status
		if want == "" {
			continue
		}
		actual := existing[d.Name]
		if actual != nil && actual.Status.RolloutStatus == want {
			p.ownWrites.rolloutStatusSeen(root, d.Name, want)
			continue
		}
		if p.ownWrites.rolloutStatusPending(root, d.Name, want, now) {
			continue
		}
		if i, ok := specWrite[d.Name]; ok {
			writes[i].rolloutStatus = want
		} else if actual != nil {
			writes = append(writes, replicaWrite{cluster: d.Name, actual: actual, rolloutStatus: want, statusOnly: true})
		}
	}
	return writes
}
