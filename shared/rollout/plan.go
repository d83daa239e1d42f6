package rollout

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// PlanInput is everything an offline rollout plan reads.
type PlanInput struct {
	// Strategy is the root policy's spec.rolloutStrategy as written.
	Strategy clusterv1alpha1.RolloutStrategy
	// StrategyPath is Strategy's field path in errors and notes (nil:
	// DefaultStrategyPath).
	StrategyPath *field.Path
	// RemediationAction is the root policy's spec.remediationAction.
	RemediationAction policyv1.RemediationAction
	// Fleet is the decision groups of the placements the policy is bound to.
	Fleet []DecisionGroup
}

// Plan is the rollout's waves, assuming every wave succeeds.
type Plan struct {
	// Strategy is the resolved strategy, every default spelled out.
	Strategy clusterv1alpha1.RolloutStrategy `json:"strategy"`
	// Progressive is whether enforcement is rolled out wave by wave (the root
	// enforces and the type is not All); otherwise there is one wave.
	Progressive bool `json:"progressive"`
	// Waves are in rollout order.
	Waves []Wave `json:"waves"`
	// Clusters are every cluster with its wave, sorted by name.
	Clusters []PlannedCluster `json:"clusters"`
	// Notes explain settings that do not do what they seem to, each naming the
	// field.
	Notes []Note `json:"notes,omitempty"`
}

// Wave is a set of clusters reached at the same step.
type Wave struct {
	// Index is the wave's position, from 0.
	Index int `json:"index"`
	// Clusters are the wave's clusters, sorted by name.
	Clusters []string `json:"clusters"`
	// DecisionGroups are the groups the wave's clusters belong to, in rollout
	// order.
	DecisionGroups []GroupRef `json:"decisionGroups"`
	// Mandatory is whether the wave is a mandatory decision group.
	Mandatory bool `json:"mandatory"`
	// NotBefore is the earliest the wave starts, counted from the start of the
	// rollout: the soak (minSuccessTime) of every earlier wave, each assumed to
	// succeed at once.
	NotBefore metav1.Duration `json:"notBefore"`
}

// PlannedCluster is one cluster and the wave that reaches it.
type PlannedCluster struct {
	Name string `json:"name"`
	Wave int    `json:"wave"`
}

// PlanWaves computes a rollout's waves directly, in time O(n log n) for n
// clusters. They are the sets of clusters OCM's rollout library chooses call after
// call when every chosen cluster succeeds and its soak passes (a differential test
// holds it to that):
//   - not progressive: one wave of every cluster;
//   - first, each mandatory decision group on its own, in rollout order, whatever
//     maxConcurrency says;
//   - then, for ProgressivePerGroup, each other group on its own, in rollout order;
//     for Progressive, the other clusters in name order, maxConcurrency at a time
//     (a percentage of the non-mandatory clusters, rounded up; unset, 0 or more
//     than them means all at once).
//
// Empty groups have no wave. Errors name the field or the placement and decision
// group at fault.
func PlanWaves(in PlanInput) (Plan, error) {
	strategy, err := ResolveStrategy(in.Strategy, in.StrategyPath)
	if err != nil {
		return Plan{}, err
	}
	f, err := newFleet(in.Fleet)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Strategy: strategy.Spec, Progressive: isProgressive(strategy, in.RemediationAction), Waves: []Wave{}}
	if !plan.Progressive {
		plan.addWave(f, f.clusters, false, 0)
		plan.index(f)
		return plan, nil
	}

	mandatory := f.mandatoryGroups(strategy.MandatoryDecisionGroups)
	plan.Notes = strategy.notes(f, mandatory)
	isMandatory := make([]bool, len(f.groups))
	for _, g := range mandatory {
		isMandatory[g] = true
		plan.addWave(f, f.groups[g].clusters, true, strategy.MinSuccessTime)
	}
	switch strategy.Spec.Type {
	case clusterv1alpha1.ProgressivePerGroup:
		for i, g := range f.groups {
			if !isMandatory[i] {
				plan.addWave(f, g.clusters, false, strategy.MinSuccessTime)
			}
		}
	case clusterv1alpha1.Progressive:
		rest := make([]string, 0, len(f.clusters))
		for _, c := range f.clusters {
			if !isMandatory[f.groupOf[c]] {
				rest = append(rest, c)
			}
		}
		size := rolloutSize(strategy.MaxConcurrency, len(rest), len(rest))
		for start := 0; start < len(rest); start += size {
			plan.addWave(f, rest[start:min(start+size, len(rest))], false, strategy.MinSuccessTime)
		}
	}
	plan.index(f)
	return plan, nil
}

// addWave appends a wave of the given sorted clusters, unless there are none.
func (p *Plan) addWave(f *fleet, clusters []string, mandatory bool, soak time.Duration) {
	if len(clusters) == 0 {
		return
	}
	positions := make([]int, 0, 1)
	for _, c := range clusters {
		positions = append(positions, f.groupOf[c])
	}
	slices.Sort(positions)
	groups := make([]GroupRef, 0, 1)
	for _, g := range slices.Compact(positions) {
		groups = append(groups, f.groups[g].ref)
	}
	index := len(p.Waves)
	p.Waves = append(p.Waves, Wave{
		Index:          index,
		Clusters:       slices.Clone(clusters),
		DecisionGroups: groups,
		Mandatory:      mandatory,
		NotBefore:      metav1.Duration{Duration: time.Duration(index) * soak},
	})
}

// index fills Plan.Clusters from the waves.
func (p *Plan) index(f *fleet) {
	wave := make(map[string]int, len(f.clusters))
	for _, w := range p.Waves {
		for _, c := range w.Clusters {
			wave[c] = w.Index
		}
	}
	p.Clusters = make([]PlannedCluster, 0, len(f.clusters))
	for _, c := range f.clusters {
		p.Clusters = append(p.Clusters, PlannedCluster{Name: c, Wave: wave[c]})
	}
}
