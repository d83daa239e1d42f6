package view

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// TimelineCluster is one cluster of a rollout.
type TimelineCluster struct {
	Name      string                   `json:"name"`
	Compliant policyv1.ComplianceState `json:"compliant"`
	// Status is the cluster's rolloutStatus on the root ("" when the live
	// rollout does not have the cluster).
	Status policyv1.RolloutStatus `json:"rolloutStatus"`
	// ReplicaStatus is the replica's own status.rolloutStatus, where the hub
	// writes it ("" otherwise).
	ReplicaStatus policyv1.RolloutStatus `json:"replicaRolloutStatus,omitempty"`
	// Since is when Status last changed.
	Since *time.Time `json:"since,omitempty"`
	// Wave is the RolloutPlan's wave of the cluster (-1: not planned).
	Wave int `json:"wave"`
}

// Wave states.
const (
	WaveDone        = "done"
	WaveProgressing = "progressing"
	WaveFailed      = "failed"
	WaveWaiting     = "waiting"
)

// TimelineWave is one wave of a rollout.
type TimelineWave struct {
	Index          int               `json:"index"`
	DecisionGroups []string          `json:"decisionGroups,omitempty"`
	Mandatory      bool              `json:"mandatory,omitempty"`
	NotBefore      time.Duration     `json:"notBefore,omitempty"`
	Clusters       []TimelineCluster `json:"clusters"`
	// Counts are the clusters by live rolloutStatus ("" for not in the live
	// rollout).
	Counts map[policyv1.RolloutStatus]int `json:"counts"`
	State  string                         `json:"state"`
	// Start is when the wave was reached, as far as the root tells: the end
	// of the previous wave (the rollout's start for the first), nil when not
	// known or not reached. End is the last Succeeded transition of a done
	// wave.
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// ToCompliant is End - Start for a done wave whose Start is known.
	ToCompliant time.Duration `json:"toCompliant,omitempty"`
}

// TimelineModel is a rollout: its waves, what holds it back, and where the
// live rollout and the reviewed RolloutPlan differ.
type TimelineModel struct {
	Namespace string                 `json:"namespace"`
	Name      string                 `json:"name"`
	Status    policyv1.RolloutStatus `json:"rolloutStatus"`
	Strategy  string                 `json:"strategy"`
	// Plan names the RolloutPlan the waves come from; without one they are
	// the live plan's (LiveKnown), or else the live clusters as one wave.
	Plan      string `json:"plan,omitempty"`
	LiveKnown bool   `json:"liveKnown"`
	// Divergence is the first difference between the RolloutPlan and the
	// live plan ("" when they agree or either is unknown).
	Divergence string         `json:"divergence,omitempty"`
	Waves      []TimelineWave `json:"waves"`
	// HeldBy says what holds the next wave back ("" when nothing waits).
	HeldBy string `json:"heldBy,omitempty"`
	// Unplanned are live clusters the plan does not have, Missing planned
	// clusters the live rollout does not have; PlanCondition is the hub's
	// RolloutPlanMatches condition message.
	Unplanned     []string   `json:"unplanned,omitempty"`
	Missing       []string   `json:"missing,omitempty"`
	PlanCondition string     `json:"planCondition,omitempty"`
	PlanMatches   *bool      `json:"planMatches,omitempty"`
	Start         *time.Time `json:"start,omitempty"`
	Now           time.Time  `json:"now"`
}

// TimelineInput is what a rollout's model is built from.
type TimelineInput struct {
	Root *policyv1.Policy
	// Plan is the RolloutPlan of the root's name applied to the hub (nil:
	// none).
	Plan *fleetv1alpha1.RolloutPlan
	// Live is the plan of the live fleet, as the hub computes it
	// (rollout.PlanBound over rollout.BoundFleet; nil when not known).
	Live *rollout.Plan
	// Replicas are the replicas' own status.rolloutStatus by cluster (may be
	// nil).
	Replicas map[string]policyv1.RolloutStatus
	// Start is the rollout's start (the hub's first RolloutWave Event; zero
	// when unknown).
	Start, Now time.Time
}

// Timeline builds a rollout's model. Its waves are the RolloutPlan's when one
// was applied, else the live plan's, else the live clusters as one wave; the
// drift between a plan and the live plan is rollout.Divergence's, the rule
// of the hub's RolloutPlanMatches condition.
func Timeline(in TimelineInput) TimelineModel {
	root, plan, replicas, start, now := in.Root, in.Plan, in.Replicas, in.Start, in.Now
	m := TimelineModel{Namespace: root.Namespace, Name: root.Name, Status: root.Status.RolloutStatus, Now: now}
	strategy := root.Spec.Rollout()
	m.Strategy = string(strategy.Type)
	if m.Strategy == "" {
		m.Strategy = "All"
	}
	if !start.IsZero() {
		m.Start = &start
	}
	live := map[string]TimelineCluster{}
	for _, e := range root.Status.Status {
		if e == nil || e.ClusterName == "" {
			continue
		}
		c := TimelineCluster{Name: e.ClusterName, Compliant: e.ComplianceState, Status: e.RolloutStatus,
			ReplicaStatus: replicas[e.ClusterName], Wave: -1}
		if e.RolloutLastTransitionTime != nil {
			t := e.RolloutLastTransitionTime.UTC()
			c.Since = &t
		}
		live[e.ClusterName] = c
	}
	for _, cond := range root.Status.Conditions {
		if cond.Type == "RolloutPlanMatches" {
			m.PlanCondition = cond.Message
			ok := cond.Status == "True"
			m.PlanMatches = &ok
		}
	}
	type waveSpec struct {
		index     int
		mandatory bool
		notBefore time.Duration
		groups    []string
		clusters  []string
	}
	var specs []waveSpec
	switch {
	case plan != nil:
		m.Plan = plan.Name
		planned := make([][]string, 0, len(plan.Spec.Waves))
		for i, w := range plan.Spec.Waves {
			ws := waveSpec{index: int(w.Index), mandatory: w.Mandatory, notBefore: w.NotBefore.Duration, clusters: w.Clusters}
			if ws.index == 0 && i > 0 {
				ws.index = i
			}
			for _, g := range w.DecisionGroups {
				ws.groups = append(ws.groups, fmt.Sprintf("%s/%s[%d]", g.Placement, g.GroupName, g.GroupIndex))
			}
			specs = append(specs, ws)
			planned = append(planned, w.Clusters)
		}
		if in.Live != nil {
			m.Divergence = rollout.Divergence(planned, *in.Live)
			m.LiveKnown = true
		}
	case in.Live != nil:
		m.LiveKnown = true
		for _, w := range in.Live.Waves {
			ws := waveSpec{index: w.Index, mandatory: w.Mandatory, notBefore: w.NotBefore.Duration, clusters: w.Clusters}
			for _, g := range w.DecisionGroups {
				ws.groups = append(ws.groups, fmt.Sprintf("%s/%s[%d]", g.Placement, g.GroupName, g.GroupIndex))
			}
			specs = append(specs, ws)
		}
	}
	if specs != nil {
		planned := map[string]bool{}
		for _, w := range specs {
			wave := TimelineWave{Index: w.index, Mandatory: w.mandatory, NotBefore: w.notBefore, DecisionGroups: w.groups}
			for _, name := range w.clusters {
				planned[name] = true
				c, ok := live[name]
				if !ok {
					m.Missing = append(m.Missing, name)
					c = TimelineCluster{Name: name, ReplicaStatus: replicas[name]}
				}
				c.Wave = wave.Index
				wave.Clusters = append(wave.Clusters, c)
			}
			m.Waves = append(m.Waves, wave)
		}
		for name := range live {
			if !planned[name] {
				m.Unplanned = append(m.Unplanned, name)
			}
		}
		slices.Sort(m.Unplanned)
		slices.Sort(m.Missing)
	} else {
		wave := TimelineWave{}
		for _, c := range live {
			wave.Clusters = append(wave.Clusters, c)
		}
		if len(wave.Clusters) > 0 {
			m.Waves = append(m.Waves, wave)
		}
	}
	prevEnd := m.Start
	for i := range m.Waves {
		w := &m.Waves[i]
		slices.SortFunc(w.Clusters, func(a, b TimelineCluster) int { return cmp.Compare(a.Name, b.Name) })
		w.Counts = map[policyv1.RolloutStatus]int{}
		for _, c := range w.Clusters {
			w.Counts[c.Status]++
		}
		w.State = waveState(w.Counts, len(w.Clusters))
		if w.Counts[policyv1.RolloutToApply] < len(w.Clusters) {
			w.Start = prevEnd
		}
		if w.State == WaveDone {
			for _, c := range w.Clusters {
				if c.Since != nil && (w.End == nil || c.Since.After(*w.End)) {
					t := *c.Since
					w.End = &t
				}
			}
			if w.Start != nil && w.End != nil && !w.End.Before(*w.Start) {
				w.ToCompliant = w.End.Sub(*w.Start)
			}
		}
		prevEnd = w.End
	}
	m.HeldBy = heldBy(m.Waves)
	return m
}

func waveState(counts map[policyv1.RolloutStatus]int, n int) string {
	switch {
	case counts[policyv1.RolloutFailed]+counts[policyv1.RolloutTimeOut] > 0:
		return WaveFailed
	case counts[policyv1.RolloutSucceeded]+counts[policyv1.RolloutSkip] == n:
		return WaveDone
	case counts[policyv1.RolloutProgressing] > 0 || counts[policyv1.RolloutSucceeded] > 0:
		return WaveProgressing
	}
	return WaveWaiting
}

// heldBy names, when a wave waits, the clusters of the first unfinished wave
// before it that keep it waiting.
func heldBy(waves []TimelineWave) string {
	for i, w := range waves {
		if w.State == WaveDone {
			continue
		}
		if i+1 >= len(waves) && w.State != WaveWaiting {
			return ""
		}
		if w.State == WaveWaiting {
			if i == 0 {
				return ""
			}
			return fmt.Sprintf("wave %d has not been reached: wave %d is done; the hub reaches it after the soak (minSuccessTime) at its next step", w.Index, waves[i-1].Index)
		}
		var names []string
		for _, c := range w.Clusters {
			if c.Status != policyv1.RolloutSucceeded && c.Status != policyv1.RolloutSkip {
				status := string(c.Status)
				if status == "" {
					status = "not in the live rollout"
				}
				names = append(names, c.Name+" ("+status+")")
			}
		}
		shown := names
		if len(shown) > 10 {
			shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(names)-10))
		}
		return fmt.Sprintf("wave %d waits for wave %d: %s", waves[i+1].Index, w.Index, strings.Join(shown, ", "))
	}
	return ""
}
