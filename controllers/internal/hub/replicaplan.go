package hub

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// replicaWrite is one write a reconcile decided on: the replica of cluster with
// action (from replicas, or desired when its hub templates were resolved for
// the cluster), or a delete when both are nil. A write of a root with hub
// templates (templated) is a candidate: the writer resolves the templates
// first and writes only when the result differs from actual.
type replicaWrite struct {
	replicas  *replication.Replicas
	desired   *policyv1.Policy
	templated bool
	cluster   string
	action    policyv1.RemediationAction
	actual    *policyv1.Policy // nil for a create
	// rolloutStatus, when set, is patched onto the replica's status after its
	// spec write, or alone when statusOnly (planRolloutStatus).
	rolloutStatus policyv1.RolloutStatus
	statusOnly    bool
}

func (w replicaWrite) isDelete() bool { return !w.statusOnly && w.replicas == nil && w.desired == nil }

// planWrites returns the writes of s's reconcile: in a full reconcile, the
// writes of the replicas that differ from what the step wants (plan) less
// those whose last write is in flight (dropInFlight, counted in s.inFlight);
// in any reconcile, the replicas' rollout status patches (planRolloutStatus):
// reports are what move a cluster to Succeeded or Failed.
func (p *Propagator) planWrites(ctx context.Context, s *rootReconcile) ([]replicaWrite, error) {
	var writes []replicaWrite
	if !s.statusOnly {
		sets := s.sets
		if s.boundKept {
			// The replica plan expands the root's PolicySets, which the kept
			// resolution does not hold.
			var err error
			if sets, _, err = p.bindingInputs(ctx, s.root); err != nil {
				return nil, err
			}
		}
		writes, s.inFlight = p.dropInFlight(s.key, p.plan(s.root, s.step.Clusters, sets, s.existing))
	}
	return p.planRolloutStatus(s.key, s.step.Clusters, s.existing, writes), nil
}

// plan compares the desired replicas — one per cluster of the rollout step, with
// the action it decided — with the cached ones and returns the writes. Desired
// replicas are compared by digest and encoded by the writers, so that a
// reconcile holds no desired replica in memory. A root with hub templates has
// replicas that differ per cluster: every decided cluster is a candidate write
// that the writers resolve (in parallel) and compare (see write).
func (p *Propagator) plan(root *policyv1.Policy, decided []rollout.ClusterDecision, sets []policyv1beta1.PolicySet, existing map[string]*policyv1.Policy) []replicaWrite {
	var writes []replicaWrite
	bound := map[string]bool{}
	replicas := replication.For(root, dependency.IndexPolicySets(setPointers(sets)))
	templated := templates.UsesHubTemplates(root)
	for _, c := range decided {
		bound[c.Name] = true
		actual := existing[c.Name]
		if templated {
			writes = append(writes, replicaWrite{replicas: replicas, templated: true, cluster: c.Name, action: c.RemediationAction, actual: actual})
		} else if actual == nil || actual.Annotations[cachedDigestAnnotation] != replicas.Digest(c.Name, c.RemediationAction) {
			writes = append(writes, replicaWrite{replicas: replicas, cluster: c.Name, action: c.RemediationAction, actual: actual})
		}
	}
	if p.Templates != nil {
		// Resolutions of clusters no longer bound, or of a root that no
		// longer has hub templates, are dropped with their watches.
		keep := bound
		if !templated {
			keep = nil
		}
		p.Templates.forget(client.ObjectKeyFromObject(root), keep)
	}
	for ns, actual := range existing {
		if !bound[ns] {
			writes = append(writes, replicaWrite{actual: actual})
		}
	}
	return writes
}

// Each replica carries its cluster's rollout status in status.rolloutStatus,
// the value the root's status[] entry for the cluster holds (ToApply,
// Progressing, Succeeded, Failed, TimeOut: the rollout design's replicated
// policy status; OCM v0.19's propagator and framework add-on have no such
// field and write nothing there). The Policy CRD has a status subresource, so
// the replica writes (create, update of the spec) cannot carry it: the hub
// sends a JSON merge patch of that one field to the replica's status
// subresource, only when the step's status differs from the cached replica's,
// once the reconcile's spec writes are made (each replica reaches its cluster
// as fast as it would without the field: patching each new replica right after
// its create made the last of a 1,000-cluster root's replicas appear twice as
// late), and never again while the cache has not shown the last one
// (ownWrites). So a replica gets one small write per change of its rollout
// status, not per step: two per root generation for All (Progressing,
// then Succeeded or Failed), three for a progressive rollout (ToApply,
// Progressing, then the outcome; a cluster of the first wave skips ToApply).
// A merge patch leaves every other status field (the spoke's compliance,
// details, observedGeneration) as it is and needs no resourceVersion, so it
// never conflicts with a spoke's status write. OCM's framework add-on replaces
// the whole status of the replica with its own type, which lacks the field: the
// next reconcile writes it back (one patch per such report; the add-on
// compares only its own fields, so the two do not chase each other).

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

// dropInFlight removes from writes those of replicas whose last accepted
// write the cache has not brought back (ownWrites), and counts them.
func (p *Propagator) dropInFlight(root types.NamespacedName, writes []replicaWrite) ([]replicaWrite, int) {
	now := p.Clock.Now()
	kept := writes[:0]
	for _, w := range writes {
		cached := ""
		if w.actual != nil {
			cached = w.actual.ResourceVersion
		}
		if !p.ownWrites.specPending(root, w.namespace(), cached, now) {
			kept = append(kept, w)
		}
	}
	return kept, len(writes) - len(kept)
}

func setPointers(sets []policyv1beta1.PolicySet) []*policyv1beta1.PolicySet {
	out := make([]*policyv1beta1.PolicySet, len(sets))
	for i := range sets {
		out[i] = &sets[i]
	}
	return out
}
