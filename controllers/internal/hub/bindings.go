package hub

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

// boundInputs is what a root's bindings resolved to: the bound clusters, the
// decision groups of its placements (clusters without a ManagedCluster
// dropped), and those clusters.
type boundInputs struct {
	resolution *binding.Resolution
	groups     map[binding.PlacementRef][]rollout.DecisionGroup
	unknown    []string
}

// badInput is bad input found resolving a root's bindings, to report on the
// root (reportInvalid) with its reason.
type badInput struct {
	reason  string
	problem error
}

// bind sets s.bound to what the root's bindings resolve to and s.sets to the
// PolicySets of its namespace, or returns the bad input found in them (to
// report on the root). A status-only reconcile takes what the first
// status-only reconcile of its epoch resolved, which settledRoots kept
// (s.boundKept: nothing they resolve from changed since), or resolves them and
// keeps the result for the next.
func (p *Propagator) bind(ctx context.Context, s *rootReconcile) (bad *badInput, err error) {
	if s.statusOnly {
		if s.bound = p.settled.bound(s.epoch, s.root); s.bound != nil {
			s.boundKept = true
			return nil, nil
		}
	}
	if s.sets, s.bound, bad, err = p.resolveBindings(ctx, s.root); err != nil || bad != nil {
		return bad, err
	}
	if s.statusOnly {
		p.settled.keep(s.root, s.epoch, s.bound)
	}
	return nil, nil
}

// resolveBindings reads the root's PolicySets, bindings and their placements'
// decisions and resolves them, or says what in them is bad input.
func (p *Propagator) resolveBindings(ctx context.Context, root *policyv1.Policy) ([]policyv1beta1.PolicySet, *boundInputs, *badInput, error) {
	sets, bindings, err := p.bindingInputs(ctx, root)
	if err != nil {
		return nil, nil, nil, err
	}
	decisions, groups, problem, err := p.decisions(ctx, root, sets, bindings)
	if err != nil {
		return nil, nil, nil, err
	}
	if problem != nil {
		return nil, nil, &badInput{reasonPlacementDecisionInvalid, problem}, nil
	}
	unknown, err := p.dropUnknownClusters(ctx, decisions, groups)
	if err != nil {
		return nil, nil, nil, err
	}
	resolution, err := binding.Resolve(root, sets, bindings, decisions)
	if err != nil {
		return nil, nil, &badInput{reasonBindingInvalid, err}, nil
	}
	return sets, &boundInputs{resolution: resolution, groups: groups, unknown: unknown}, nil, nil
}

// bindingInputs returns the PolicySets of the root's namespace and the bindings
// that name the root or one of the sets containing it.
func (p *Propagator) bindingInputs(ctx context.Context, root *policyv1.Policy) ([]policyv1beta1.PolicySet, []policyv1.PlacementBinding, error) {
	sets := &policyv1beta1.PolicySetList{}
	if err := p.Client.List(ctx, sets, client.InNamespace(root.Namespace)); err != nil {
		return nil, nil, err
	}
	subjects := []string{kindName(binding.KindPolicy, root.Name)}
	for _, set := range sets.Items {
		for _, member := range set.Spec.Policies {
			if string(member) == root.Name {
				subjects = append(subjects, kindName(binding.KindPolicySet, set.Name))
				break
			}
		}
	}
	seen := map[string]bool{}
	var bindings []policyv1.PlacementBinding
	for _, subject := range subjects {
		list := &policyv1.PlacementBindingList{}
		if err := p.Client.List(ctx, list, client.InNamespace(root.Namespace), client.MatchingFields{indexBindingSubject: subject}); err != nil {
			return nil, nil, err
		}
		for _, pb := range list.Items {
			if !seen[pb.Name] {
				seen[pb.Name] = true
				bindings = append(bindings, pb)
			}
		}
	}
	return sets.Items, bindings, nil
}

// decisions reads the clusters selected by each placement of the bindings that
// bind root (binding.Placements) and their decision groups for the rollout, with
// scheduling.GroupOf and RuleGroup, as plan-rollout reads them: a Placement's
// PlacementDecisions, a PlacementRule's status.decisions (one group of index 0);
// a missing placement selects nothing. A PlacementDecision whose
// decision-group-index label is no index is a problem to report on the root
// when its rollout orders clusters by group (rollout.UsesGroupIndexes);
// otherwise its clusters are bound as group 0, as OCM's propagator binds them.
func (p *Propagator) decisions(ctx context.Context, root *policyv1.Policy, sets []policyv1beta1.PolicySet, bindings []policyv1.PlacementBinding) (
	out binding.Decisions, groups map[binding.PlacementRef][]rollout.DecisionGroup, problem, err error) {
	out = binding.Decisions{}
	groups = map[binding.PlacementRef][]rollout.DecisionGroup{}
	var problems []error
	for _, ref := range binding.Placements(root, sets, bindings) {
		var clusters []string
		switch ref.Kind {
		case binding.KindPlacement:
			list := &clusterv1beta1.PlacementDecisionList{}
			if err := p.Client.List(ctx, list, client.InNamespace(root.Namespace),
				client.MatchingFields{indexDecisionPlacement: root.Namespace + "/" + ref.Name}); err != nil {
				return nil, nil, nil, err
			}
			for i := range list.Items {
				group, err := scheduling.GroupOf(&list.Items[i])
				if err != nil && rollout.UsesGroupIndexes(&root.Spec) {
					problems = append(problems, fmt.Errorf("PlacementDecision %s/%s of Placement %s: %w",
						root.Namespace, list.Items[i].Name, ref.Name, err))
					continue
				}
				clusters = append(clusters, group.Clusters...)
				groups[ref] = append(groups[ref], group)
			}
		case binding.KindPlacementRule:
			rule := &appsv1.PlacementRule{}
			err := p.Client.Get(ctx, types.NamespacedName{Namespace: root.Namespace, Name: ref.Name}, rule)
			if apierrors.IsNotFound(err) {
				rule = &appsv1.PlacementRule{ObjectMeta: metav1.ObjectMeta{Namespace: root.Namespace, Name: ref.Name}}
			} else if err != nil {
				return nil, nil, nil, err
			}
			group := scheduling.RuleGroup(rule)
			clusters = group.Clusters
			groups[ref] = []rollout.DecisionGroup{group}
		}
		out[ref] = clusters
	}
	return out, groups, errors.Join(problems...), nil
}

// dropUnknownClusters removes from decisions and groups every cluster without a
// ManagedCluster, and returns those clusters sorted.
func (p *Propagator) dropUnknownClusters(ctx context.Context, decisions binding.Decisions, groups map[binding.PlacementRef][]rollout.DecisionGroup) ([]string, error) {
	known := map[string]bool{}
	var cluster clusterv1.ManagedCluster // only its existence is read: no copy of the cache's
	for _, clusters := range decisions {
		for _, name := range clusters {
			if _, seen := known[name]; seen {
				continue
			}
			err := p.Client.Get(ctx, types.NamespacedName{Name: name}, &cluster, client.UnsafeDisableDeepCopy)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			known[name] = err == nil
		}
	}
	isUnknown := func(name string) bool { return !known[name] }
	for ref, clusters := range decisions {
		decisions[ref] = slices.DeleteFunc(clusters, isUnknown)
	}
	for ref, gs := range groups {
		for i := range gs {
			gs[i].Clusters = slices.DeleteFunc(slices.Clone(gs[i].Clusters), isUnknown)
		}
		groups[ref] = gs
	}
	var unknown []string
	for name, ok := range known {
		if !ok {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown, nil
}
