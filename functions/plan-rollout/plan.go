package main

import (
	"fmt"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	fleetpolicyv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

// placementKey names a Placement or PlacementRule.
type placementKey struct {
	namespace string
	ref       binding.PlacementRef
}

// placementClusters are the decision groups of one placement.
type placementClusters struct {
	groups []rollout.DecisionGroup
	// clusters are the clusters of every group.
	clusters []string
	// failed says that the decisions could not be read or computed (the reason
	// is a result): the policies bound through it get no plan.
	failed bool
	// badIndexes are the PlacementDecisions whose decision-group-index label is
	// no index (scheduling.GroupOf), read as group 0: only a policy whose
	// rollout orders clusters by group (rollout.UsesGroupIndexes) is stopped.
	badIndexes []badIndex
	// warned says that badIndexes were reported as a warning already.
	warned bool
}

// badIndex is a PlacementDecision whose group index cannot be read, and why.
type badIndex struct {
	item *fn.KubeObject
	err  error
}

// planner makes the plans of one ResourceList.
type planner struct {
	in  *inputs
	now time.Time
	// decisions memoises each placement's decision groups; nil when the
	// placement is not in the input.
	decisions map[placementKey]*placementClusters
}

// plan returns the RolloutPlan of a Policy, or false when its bindings,
// placements or strategy are in error (the results say why).
func (p *planner) plan(policy object[policyv1.Policy]) (*fn.KubeObject, bool) {
	root := policy.obj
	if !p.in.checkTemplatedActions(policy) {
		return nil, false
	}
	bindings := p.in.bindingsOf[root.Namespace]
	decisions := binding.Decisions{}
	for _, ref := range binding.Placements(root, p.in.sets, bindings) {
		pc := p.clustersOf(root.Namespace, ref)
		if pc == nil {
			if root.Spec.Disabled {
				continue // bound to no cluster, whatever the placement selects
			}
			// A placement on the hub only: the clusters it selects, restricted
			// bindings' included, are not known, nor are the waves. The
			// binding's warning (missingPlacement) names this Policy.
			p.in.unplanned[objectKey{root.Namespace, root.Name}] = true
			return nil, false
		}
		if pc.failed {
			// As the hub, which reads the same placements: a decision that
			// cannot be read stops the policy (reported on the decision).
			return nil, false
		}
		if len(pc.badIndexes) > 0 && !p.acceptBadIndexes(root, pc) {
			return nil, false
		}
		decisions[ref] = pc.clusters
	}
	res, err := binding.Resolve(root, p.in.sets, bindings, decisions)
	if err != nil {
		return nil, false // checkBindings reported the bindings at fault
	}
	p.in.warnIgnoredOverrides(root, res.IgnoredOverrides)

	fleet := rollout.BoundFleet(res, func(ref binding.PlacementRef) []rollout.DecisionGroup {
		if pc := p.clustersOf(root.Namespace, ref); pc != nil {
			return pc.groups
		}
		return nil // only for a disabled Policy, bound to no cluster
	})
	plan, ok := p.planWaves(policy, res, fleet)
	if !ok {
		return nil, false
	}

	for _, note := range plan.Notes {
		p.in.results = append(p.in.results, krm.ObjectResult(policy.item, fn.Warning, note.Field, note.Message))
	}
	out := rolloutPlan(root, res, plan)
	p.in.results = append(p.in.results, krm.ObjectResult(policy.item, fn.Info, "", waveTable(out)))
	obj, err := toKubeObject(out)
	if err != nil {
		p.in.results = append(p.in.results, krm.ObjectResult(policy.item, fn.Error, "", "writing its RolloutPlan: "+err.Error()))
		return nil, false
	}
	return obj, true
}

// warnIgnoredOverrides adds a warning on the field of each binding override
// that root's rollout strategy ignores (binding.Resolution.IgnoredOverrides,
// the rule the hub's BindingOverridesIgnored condition reports too), naming
// root: a binding may bind several Policies, not all of them progressive.
func (in *inputs) warnIgnoredOverrides(root *policyv1.Policy, ignored []binding.IgnoredOverride) {
	for _, o := range ignored {
		for _, b := range in.bindings {
			if b.obj.Namespace == root.Namespace && b.obj.Name == o.Binding {
				in.results = append(in.results, krm.ObjectResult(b.item, fn.Warning, o.Field.String(),
					"for Policy "+root.Namespace+"/"+root.Name+": "+o.Message()))
			}
		}
	}
}

// planWaves plans the waves over fleet, reporting errors on the Policy.
func (p *planner) planWaves(policy object[policyv1.Policy], res *binding.Resolution, fleet []rollout.DecisionGroup) (rollout.Plan, bool) {
	plan, err := rollout.PlanBound(policy.obj.Spec.Rollout(), policy.obj.Spec.RemediationAction, res, fleet)
	if err != nil {
		p.in.reportErrors(policy.item, err)
		return rollout.Plan{}, false
	}
	return plan, true
}

// reportErrors adds an error result on item per error in err, naming the field
// of each field error.
func (in *inputs) reportErrors(item *fn.KubeObject, err error) {
	in.results = append(in.results, krm.ErrorResults(item, fn.Error, err)...)
}

// clustersOf returns the decision groups of a placement of namespace, reading
// them once: a Placement's PlacementDecisions, or its offline schedule over the
// ManagedClusters when the input has none; a PlacementRule's status.decisions,
// as one group of index 0. Nil means the placement is not in the input.
func (p *planner) clustersOf(namespace string, ref binding.PlacementRef) *placementClusters {
	key := placementKey{namespace, ref}
	if pc, done := p.decisions[key]; done {
		return pc
	}
	var pc *placementClusters
	name := objectKey{namespace, ref.Name}
	switch ref.Kind {
	case binding.KindPlacement:
		if pl, found := p.in.placements[name]; found {
			pc = p.placementGroups(pl)
		}
	case binding.KindPlacementRule:
		if pr, found := p.in.placementRules[name]; found {
			pc = p.ruleGroup(pr)
		}
	}
	p.decisions[key] = pc
	return pc
}

// ruleGroup reads or computes a PlacementRule's decisions, one group of index
// 0: with ManagedClusters in the input, those the hub's PlacementRule
// scheduler writes (scheduling.PlacementRuleDecisions, from the rule's spec and
// its status.decisions as the previous ones), unless the rule names another
// scheduler; otherwise its status.decisions.
func (p *planner) ruleGroup(pr object[appsv1.PlacementRule]) *placementClusters {
	rule := pr.obj
	if len(p.in.clusters) > 0 && scheduling.SchedulesPlacementRule(rule.Spec) {
		clusters := p.in.clusters
		if len(rule.Spec.ClusterConditions) > 0 || rule.Spec.ResourceHint != nil {
			clusters = p.in.clustersAndStatus()
		}
		decisions, err := scheduling.PlacementRuleDecisions(rule.Spec, rule.Status.Decisions, clusters)
		if err != nil {
			p.in.reportErrors(pr.item, err)
			return &placementClusters{failed: true}
		}
		scheduled := *rule
		scheduled.Status.Decisions = decisions
		rule = &scheduled
		p.in.results = append(p.in.results, krm.ObjectResult(pr.item, fn.Info, "", fmt.Sprintf(
			"scheduled offline over %d ManagedClusters, as the hub's PlacementRule scheduler: %d clusters selected",
			len(clusters), len(decisions))))
	}
	g := scheduling.RuleGroup(rule)
	return &placementClusters{groups: []rollout.DecisionGroup{g}, clusters: g.Clusters}
}

// placementGroups reads or computes a Placement's decision groups.
func (p *planner) placementGroups(pl object[clusterv1beta1.Placement]) *placementClusters {
	pc := &placementClusters{}
	decisions := p.in.decisionsOf[objectKey{pl.obj.Namespace, pl.obj.Name}]
	if len(decisions) == 0 {
		if len(p.in.clusters) == 0 {
			p.in.results = append(p.in.results, krm.ObjectResult(pl.item, fn.Warning, "",
				"selects no cluster: the input holds neither its PlacementDecisions nor ManagedClusters to schedule it on"))
			return pc
		}
		res, err := scheduling.Schedule(scheduling.Input{
			Placement:               pl.obj,
			Clusters:                p.in.clusters,
			ClusterSetBindingsKnown: len(p.in.clusterSetBindings) > 0,
			ClusterSets:             p.in.clusterSets,
			ClusterSetBindings:      p.in.clusterSetBindings,
			Now:                     p.now,
		})
		if err != nil {
			p.in.reportErrors(pl.item, err)
			pc.failed = true
			return pc
		}
		for _, note := range res.Notes {
			p.in.results = append(p.in.results, krm.ObjectResult(pl.item, fn.Info, note.Field, note.Message))
		}
		p.in.results = append(p.in.results, krm.ObjectResult(pl.item, fn.Info, "", fmt.Sprintf(
			"scheduled offline over %d ManagedClusters: %d clusters selected, in %d decision groups",
			len(p.in.clusters), res.NumberOfSelectedClusters, len(res.Groups))))
		for i := range res.Decisions {
			decisions = append(decisions, object[clusterv1beta1.PlacementDecision]{pl.item, &res.Decisions[i]})
		}
	}
	for _, d := range decisions {
		g, err := scheduling.GroupOf(d.obj)
		if err != nil {
			pc.badIndexes = append(pc.badIndexes, badIndex{d.item, err})
		}
		pc.groups = append(pc.groups, g)
		pc.clusters = append(pc.clusters, g.Clusters...)
	}
	return pc
}

// acceptBadIndexes decides, as the hub does, whether root may be planned over
// a placement with PlacementDecisions whose group index cannot be read: not
// when its rollout orders clusters by group (an error on each decision); else
// yes, their clusters in group 0 as OCM's propagator binds them (a warning on
// each decision, once).
func (p *planner) acceptBadIndexes(root *policyv1.Policy, pc *placementClusters) bool {
	report := func(b badIndex, severity fn.Severity, consequence string) {
		for _, r := range krm.ErrorResults(b.item, severity, b.err) {
			r.Message += ": " + consequence
			p.in.results = append(p.in.results, r)
		}
	}
	if rollout.UsesGroupIndexes(&root.Spec) {
		for _, b := range pc.badIndexes {
			report(b, fn.Error, fmt.Sprintf("Policy %s/%s rolls out by decision group and gets no plan", root.Namespace, root.Name))
		}
		return false
	}
	if !pc.warned {
		pc.warned = true
		for _, b := range pc.badIndexes {
			report(b, fn.Warning, "read as group 0, as OCM's propagator (which never reads the label) binds its clusters; a Policy that rolls out by decision group gets no plan")
		}
	}
	return true
}

// rolloutPlan is the RolloutPlan of root.
func rolloutPlan(root *policyv1.Policy, res *binding.Resolution, plan rollout.Plan) *fleetpolicyv1alpha1.RolloutPlan {
	out := &fleetpolicyv1alpha1.RolloutPlan{
		TypeMeta: metav1.TypeMeta{APIVersion: fleetpolicyv1alpha1.GroupVersion.String(), Kind: fleetpolicyv1alpha1.RolloutPlanKind},
		ObjectMeta: metav1.ObjectMeta{Name: root.Name, Namespace: root.Namespace,
			Annotations: map[string]string{fn.KptLocalConfig: "true"}},
		Spec: fleetpolicyv1alpha1.RolloutPlanSpec{
			PolicyRef: fleetpolicyv1alpha1.PolicyRef{Name: root.Name, Namespace: root.Namespace},
			Strategy:  plan.Strategy,
			Clusters:  make([]fleetpolicyv1alpha1.PlannedCluster, 0, len(res.Clusters)),
			Waves:     make([]fleetpolicyv1alpha1.Wave, 0, len(plan.Waves)),
		},
	}
	waveOf := make(map[string]int32, len(plan.Clusters))
	for _, w := range plan.Waves {
		for _, c := range w.Clusters {
			waveOf[c] = int32(w.Index)
		}
		groups := make([]fleetpolicyv1alpha1.DecisionGroupRef, 0, len(w.DecisionGroups))
		for _, g := range w.DecisionGroups {
			groups = append(groups, fleetpolicyv1alpha1.DecisionGroupRef{Placement: g.Placement, GroupName: g.GroupName, GroupIndex: g.GroupIndex})
		}
		out.Spec.Waves = append(out.Spec.Waves, fleetpolicyv1alpha1.Wave{
			Index: int32(w.Index), Clusters: w.Clusters, DecisionGroups: groups, Mandatory: w.Mandatory, NotBefore: w.NotBefore,
		})
	}
	for _, c := range res.Clusters {
		planned := fleetpolicyv1alpha1.PlannedCluster{Name: c.Name, RemediationAction: c.RemediationAction}
		if !root.Spec.RemediationAction.IsEnforce() {
			planned.EnforcedBy = c.EnforcedBy
		}
		if wave, enforced := waveOf[c.Name]; enforced {
			planned.Wave = &wave
		}
		out.Spec.Clusters = append(out.Spec.Clusters, planned)
	}
	return out
}
