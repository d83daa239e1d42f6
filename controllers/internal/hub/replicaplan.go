package hub

import (
	"context"
	"encoding/json"

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

// The verbs of replica writes, as the replicaWrites metric and the
// ReplicasFailed condition name them.
const (
	verbCreate = "create"
	verbUpdate = "update"
	verbDelete = "delete"
)

func (w replicaWrite) verb() string {
	switch {
	case w.statusOnly:
		return verbRolloutStatus
	case w.isDelete():
		return verbDelete
	case w.actual == nil:
		return verbCreate
	}
	return verbUpdate
}

// namespace is the cluster namespace the write goes to.
func (w replicaWrite) namespace() string {
	if w.actual != nil {
		return w.actual.Namespace
	}
	return w.cluster
}

// body is the replica to write, as JSON, with resourceVersion set.
func (w replicaWrite) body(resourceVersion string) []byte {
	if w.desired == nil {
		return w.replicas.JSON(w.cluster, w.action, resourceVersion)
	}
	desired := *w.desired
	desired.ResourceVersion = resourceVersion
	b, _ := json.Marshal(&desired) // a Policy always encodes
	return b
}

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
