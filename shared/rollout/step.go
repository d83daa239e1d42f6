package rollout

import (
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clustersdkv1alpha1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// holdAction is the remediationAction of a replica a progressive rollout has not
// reached yet.
const holdAction policyv1.RemediationAction = "inform"

// Progress is what a rollout records per cluster between steps. It must be stored
// in API objects (the root policy's status and the replica), so that a restarted
// controller resumes where it stopped.
type Progress struct {
	// Status is the cluster's rolloutStatus.
	Status policyv1.RolloutStatus `json:"status,omitempty"`
	// LastTransitionTime is when Status last changed, or when the rollout of a new
	// generation reached the cluster. It is the start of the progressDeadline
	// (Progressing, Failed) and of the soak (Succeeded).
	LastTransitionTime time.Time `json:"lastTransitionTime,omitzero"`
	// Generation is the root policy generation Status and LastTransitionTime belong
	// to. A Progress of another generation is reset.
	Generation int64 `json:"generation,omitempty"`
}

// ClusterState is what is known of one cluster before a step.
type ClusterState struct {
	// Name is the cluster's name.
	Name string
	// RemediationAction is the cluster's action without a rollout: the bound
	// action of package binding (selective enforcement); empty means the root's.
	// It is used only when the rollout is not progressive; a progressive rollout
	// ignores binding overrides: the rollout alone decides when a cluster enforces.
	RemediationAction policyv1.RemediationAction
	// Progress is what the previous step recorded (zero for a new cluster).
	Progress Progress
	// Compliance is the compliance the cluster's replica reports.
	Compliance policyv1.ComplianceState
	// StatusCurrent is whether Compliance was evaluated for the replica as last
	// written: its templates' generation for the current root generation and the
	// replica's current remediationAction (so a replica just switched from inform
	// to enforce is not current until the spoke re-evaluates it).
	StatusCurrent bool
}

// StepInput is everything one step of a live rollout reads.
type StepInput struct {
	// Strategy is the root policy's spec.rolloutStrategy as written.
	Strategy clusterv1alpha1.RolloutStrategy
	// StrategyPath is Strategy's field path in errors and notes (nil:
	// DefaultStrategyPath).
	StrategyPath *field.Path
	// RemediationAction is the root policy's spec.remediationAction.
	RemediationAction policyv1.RemediationAction
	// Generation is the root policy's metadata.generation.
	Generation int64
	// Fleet is the decision groups of the placements the policy is bound to.
	Fleet []DecisionGroup
	// Clusters are the known states; a cluster of the fleet missing here is new.
	Clusters []ClusterState
	// Now is the time of the step.
	Now time.Time
}

// ClusterDecision is what a step decides for one cluster of the fleet.
type ClusterDecision struct {
	// Name is the cluster's name.
	Name string
	// Group is the decision group the cluster is rolled out with.
	Group GroupRef
	// RemediationAction is the spec.remediationAction to write on the replica.
	RemediationAction policyv1.RemediationAction
	// Progress is the cluster's new progress, to store.
	Progress Progress
}

// StepResult is the outcome of one step.
type StepResult struct {
	// Clusters has one decision per cluster of the fleet, sorted by name.
	Clusters []ClusterDecision
	// Removed are the clusters of StepInput.Clusters that left the fleet, sorted.
	Removed []string
	// Reached are the decisions of Clusters for the clusters this step reached:
	// the rollout chose them now, so they became Progressing with the action of
	// a reached cluster. In name order. A cluster that was reached before and
	// is Progressing again (its report no longer current) is not among them.
	Reached []ClusterDecision
	// RolloutStatus is the root policy's aggregated status.rolloutStatus:
	// Progressing (clusters still ToApply or Progressing), Failed (the rollout
	// stopped on maxFailures, or ended with failed or timed-out clusters) or
	// Succeeded (every cluster succeeded; also for an empty fleet).
	RolloutStatus policyv1.RolloutStatus
	// MaxFailureBreach is whether the rollout is stopped by maxFailures: no cluster
	// it has not reached is selected until failures clear.
	MaxFailureBreach bool
	// RequeueAfter, when set, is when to run the next step even if nothing changes
	// (a soak ends, a deadline passes); 0 means at once.
	RequeueAfter *time.Duration
	// Notes explain settings that do not do what they seem to (see the package
	// documentation), each naming the field.
	Notes []Note
}

// Step decides one step of a live rollout: per cluster of the fleet the
// remediationAction to write and the rollout progress to store, the aggregated
// rollout status and when to look again. OCM's rollout library makes the choice of
// the clusters to reach next; it is called at most once. Errors name the field or
// the placement and decision group at fault.
func Step(in StepInput) (StepResult, error) {
	strategy, err := ResolveStrategy(in.Strategy, in.StrategyPath)
	if err != nil {
		return StepResult{}, err
	}
	f, err := newFleet(in.Fleet)
	if err != nil {
		return StepResult{}, err
	}
	states, err := indexStates(in.Clusters)
	if err != nil {
		return StepResult{}, err
	}

	progressive := isProgressive(strategy, in.RemediationAction)
	mandatory := f.mandatoryGroups(strategy.MandatoryDecisionGroups)
	result := StepResult{Clusters: make([]ClusterDecision, len(f.clusters))}
	if progressive {
		result.Notes = strategy.notes(f, mandatory)
	}
	for _, s := range in.Clusters {
		if _, inFleet := f.groupOf[s.Name]; !inFleet {
			result.Removed = append(result.Removed, s.Name)
		}
	}
	slices.Sort(result.Removed)

	// Bring every cluster's progress to the current generation and to what its
	// replica reports; collect the clusters the rollout has reached.
	position := make(map[string]int, len(f.clusters))
	var existing []clustersdkv1alpha1.ClusterRolloutStatus
	for i, name := range f.clusters {
		position[name] = i
		state := states[name]
		target := reachedAction(progressive, state, in.RemediationAction)
		d := ClusterDecision{Name: name, Group: f.groups[f.groupOf[name]].ref, RemediationAction: target, Progress: state.Progress}
		p := &d.Progress
		_, applied := appliedStatus[p.Status]
		switch {
		case p.Generation != in.Generation || (!applied && p.Status != policyv1.RolloutToApply):
			*p = Progress{Status: policyv1.RolloutToApply, LastTransitionTime: in.Now, Generation: in.Generation}
			applied = false
		case applied:
			if next := observe(p.Status, target, state); next != p.Status {
				p.Status, p.LastTransitionTime = next, in.Now
			}
		}
		// A reached cluster without a transition time would never time out (the
		// library counts its deadline from now on every call).
		if p.LastTransitionTime.IsZero() {
			p.LastTransitionTime = in.Now
		}
		if applied {
			existing = append(existing, clustersdkv1alpha1.ClusterRolloutStatus{
				ClusterName:        name,
				GroupKey:           f.libraryKey(f.groupOf[name]),
				Status:             appliedStatus[p.Status],
				LastTransitionTime: timePtr(p.LastTransitionTime),
			})
		} else if progressive {
			d.RemediationAction = holdAction
		}
		result.Clusters[i] = d
	}
	if len(f.clusters) == 0 {
		result.RolloutStatus = policyv1.RolloutSucceeded
		return result, nil
	}

	var decided clustersdkv1alpha1.RolloutResult
	if !libraryIdle(progressive, strategy, len(f.clusters), existing, in.Now) {
		decided, err = decide(f, libraryStrategy(strategy, progressive, mandatory), existing, in.Now)
		if err != nil {
			// Unreachable for a strategy ResolveStrategy accepted; reported, not hidden.
			return StepResult{}, fmt.Errorf("%s: OCM's rollout library: %w", strategy.path, err)
		}
	}
	for _, c := range decided.ClustersTimeOut {
		p := &result.Clusters[position[c.ClusterName]].Progress
		p.Status, p.LastTransitionTime = policyv1.RolloutTimeOut, in.Now
	}
	var reached []int
	for _, c := range decided.ClustersToRollout {
		if c.Status == clustersdkv1alpha1.ToApply {
			reached = append(reached, position[c.ClusterName])
		}
	}
	result.MaxFailureBreach = decided.MaxFailureBreach
	// Mandatory groups tolerate no failure. The library reports a mandatory
	// cluster's failure only until the cluster is stored as TimeOut; from then on
	// it moves on to the other groups. Keep the rollout stopped instead.
	if progressive && mandatoryFailed(f, mandatory, result.Clusters, position) {
		result.MaxFailureBreach, reached = true, nil
	}
	slices.Sort(reached) // positions in Clusters, which is in name order
	for _, i := range reached {
		d := &result.Clusters[i]
		d.Progress = Progress{Status: policyv1.RolloutProgressing, LastTransitionTime: in.Now, Generation: in.Generation}
		d.RemediationAction = reachedAction(progressive, states[d.Name], in.RemediationAction)
		result.Reached = append(result.Reached, *d)
	}

	result.RequeueAfter = decided.RecheckAfter
	if len(reached) > 0 && strategy.ProgressDeadline != nil {
		// The library sets no recheck time for the clusters it has just chosen.
		if result.RequeueAfter == nil || *strategy.ProgressDeadline < *result.RequeueAfter {
			deadline := *strategy.ProgressDeadline
			result.RequeueAfter = &deadline
		}
	}
	result.RolloutStatus = aggregate(result.Clusters, result.MaxFailureBreach)
	return result, nil
}

// isProgressive reports whether enforcement is rolled out progressively: the root
// enforces and the strategy is not All. Otherwise every cluster gets the policy at
// once, with its own action.
func isProgressive(s Strategy, root policyv1.RemediationAction) bool {
	return root.IsEnforce() && s.Spec.Type != clusterv1alpha1.All
}

// UsesGroupIndexes reports whether the rollout of a root policy with spec
// orders its clusters by decision group (an enforcing root with a strategy
// other than All), so that a PlacementDecision whose group index cannot be
// read must stop it. Otherwise every bound cluster is reached at once, and the
// index does not matter, as for OCM v0.19's propagator, which never reads it.
func UsesGroupIndexes(spec *policyv1.PolicySpec) bool { return Progressive(spec) }

// Progressive reports whether a root policy with spec rolls its enforcement
// out progressively, as Step does: it enforces and its strategy, as written,
// is neither unset nor All.
func Progressive(spec *policyv1.PolicySpec) bool {
	typ := spec.Rollout().Type
	return spec.RemediationAction.IsEnforce() && typ != "" && typ != clusterv1alpha1.All
}

// reachedAction is the action of a cluster the rollout has reached: the root's in
// a progressive rollout, otherwise the cluster's own (binding overrides applied).
func reachedAction(progressive bool, s ClusterState, root policyv1.RemediationAction) policyv1.RemediationAction {
	if progressive || s.RemediationAction == "" {
		return root
	}
	return s.RemediationAction
}

// timePtr is t as the library's optional time.
func timePtr(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t}
}

// observe is the status a reached cluster's replica reports:
// Progressing until the replica's status is current, then Succeeded when it is
// compliant (or, for a replica that does not enforce, as soon as it has any
// status), Failed when it is non-compliant and Progressing while Pending. A
// TimeOut stays TimeOut until the cluster succeeds.
func observe(stored policyv1.RolloutStatus, action policyv1.RemediationAction, s ClusterState) policyv1.RolloutStatus {
	var seen policyv1.RolloutStatus
	switch {
	case !s.StatusCurrent || s.Compliance == "":
		seen = policyv1.RolloutProgressing
	case !action.IsEnforce() || s.Compliance == policyv1.Compliant:
		seen = policyv1.RolloutSucceeded
	case s.Compliance == policyv1.NonCompliant:
		seen = policyv1.RolloutFailed
	default:
		seen = policyv1.RolloutProgressing
	}
	if stored == policyv1.RolloutTimeOut && seen != policyv1.RolloutSucceeded {
		return policyv1.RolloutTimeOut
	}
	return seen
}

// libraryStrategy is the strategy the library is given: the resolved one with its
// mandatory groups spelled by merged index, or, for a rollout that is not
// progressive, All with the strategy's progressDeadline.
func libraryStrategy(s Strategy, progressive bool, mandatory []int) clusterv1alpha1.RolloutStrategy {
	spec := *s.Spec.DeepCopy()
	switch {
	case !progressive:
		deadline := progressDeadlineNone
		if s.ProgressDeadline != nil {
			deadline = s.ProgressDeadline.String()
		}
		return clusterv1alpha1.RolloutStrategy{
			Type: clusterv1alpha1.All,
			All:  &clusterv1alpha1.RolloutAll{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: deadline}},
		}
	case spec.Type == clusterv1alpha1.Progressive:
		spec.Progressive.MandatoryDecisionGroups = libraryMandatory(mandatory)
	case spec.Type == clusterv1alpha1.ProgressivePerGroup:
		spec.ProgressivePerGroup.MandatoryDecisionGroups = libraryMandatory(mandatory)
	}
	return spec
}

// mandatoryFailed reports whether a cluster of a mandatory group is Failed or
// TimeOut.
func mandatoryFailed(f *fleet, mandatory []int, decisions []ClusterDecision, position map[string]int) bool {
	for _, g := range mandatory {
		for _, c := range f.groups[g].clusters {
			switch decisions[position[c]].Progress.Status {
			case policyv1.RolloutFailed, policyv1.RolloutTimeOut:
				return true
			}
		}
	}
	return false
}

// aggregate is the root policy's rolloutStatus.
func aggregate(decisions []ClusterDecision, breach bool) policyv1.RolloutStatus {
	if breach {
		return policyv1.RolloutFailed
	}
	failed := false
	for _, d := range decisions {
		switch d.Progress.Status {
		case policyv1.RolloutToApply, policyv1.RolloutProgressing:
			return policyv1.RolloutProgressing
		case policyv1.RolloutFailed, policyv1.RolloutTimeOut:
			failed = true
		}
	}
	if failed {
		return policyv1.RolloutFailed
	}
	return policyv1.RolloutSucceeded
}

// indexStates maps cluster states by name, rejecting unnamed and repeated ones.
func indexStates(states []ClusterState) (map[string]ClusterState, error) {
	out := make(map[string]ClusterState, len(states))
	var errs []error
	for i, s := range states {
		if s.Name == "" {
			errs = append(errs, fmt.Errorf("cluster state %d: the cluster name is empty", i))
			continue
		}
		if _, dup := out[s.Name]; dup {
			errs = append(errs, fmt.Errorf("cluster %q: has two states", s.Name))
			continue
		}
		out[s.Name] = s
	}
	return out, errors.Join(errs...)
}
