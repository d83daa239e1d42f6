package binding

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// Kinds a PlacementBinding's placementRef may name, each with its own API group.
const (
	KindPlacement     = "Placement"     // cluster.open-cluster-management.io
	KindPlacementRule = "PlacementRule" // apps.open-cluster-management.io
)

// Kinds a PlacementBinding subject may name (API group policy.open-cluster-management.io).
const (
	KindPolicy    = "Policy"
	KindPolicySet = "PolicySet"
)

// overrideAction is the remediationAction a binding override gives a replica.
const overrideAction policyv1.RemediationAction = "enforce"

// PlacementRef names a Placement or PlacementRule in the policy's namespace.
type PlacementRef struct {
	Kind string // KindPlacement or KindPlacementRule
	Name string
}

// Decisions holds the clusters each placement selects. The caller fills it from the
// PlacementDecisions labelled cluster.open-cluster-management.io/placement=<name>
// (a Placement) or from status.decisions (a PlacementRule). A placement that is not
// in the map selects no cluster.
type Decisions map[PlacementRef][]string

// BoundCluster is one cluster the policy is bound to.
type BoundCluster struct {
	// Name is the cluster's name (and its namespace on the hub).
	Name string
	// RemediationAction is the replica's spec.remediationAction: "enforce" when an
	// override applies and the root does not enforce, otherwise the root's value
	// unchanged (possibly empty, leaving each template its own).
	RemediationAction policyv1.RemediationAction
	// EnforcedBy are the names of the bindings whose enforce override applies to
	// this cluster, sorted and without duplicates; empty when none does, or when
	// the policy's rollout strategy makes overrides ignored. It is filled whatever
	// the root's own remediationAction.
	EnforcedBy []string
	// RemainingBindings are, when a PolicySet path of Resolution.Placements
	// excludes this cluster, the names of the non-restricted bindings that
	// still place the policy on it, sorted; empty otherwise.
	RemainingBindings []string
}

// Resolution is where a root policy is bound and how.
type Resolution struct {
	// Clusters are the bound clusters, sorted by name.
	Clusters []BoundCluster
	// Placements are the root's status.placement entries, sorted by binding,
	// placement, placementRule and policySet.
	Placements []*policyv1.Placement
	// BindingPlacements are the placements of the non-restricted bindings that
	// bind the policy, each once, sorted: the placements whose decision groups a
	// rollout walks.
	BindingPlacements []PlacementRef
	// IgnoredOverrides are the enforce overrides of the bindings that bind the
	// policy (restricted ones included) that its rollout strategy ignores
	// (OverridesApply), sorted by binding; empty when the strategy is All.
	IgnoredOverrides []IgnoredOverride
	// excludedFrom holds, per placement of BindingPlacements, the clusters that
	// every non-restricted binding through it excludes (see Excludes).
	excludedFrom map[PlacementRef]map[string]bool
}

// Excludes reports whether every non-restricted binding through placement ref
// excludes cluster with a PolicySet exclusion: the placement decides the
// cluster, but does not bind the policy to it (another placement may).
func (r *Resolution) Excludes(ref PlacementRef, cluster string) bool {
	return r != nil && r.excludedFrom[ref][cluster]
}

// Cluster returns the bound cluster named name, and whether it is bound.
func (r *Resolution) Cluster(name string) (BoundCluster, bool) {
	if r == nil {
		return BoundCluster{}, false
	}
	i, found := slices.BinarySearchFunc(r.Clusters, name, func(c BoundCluster, name string) int {
		return cmp.Compare(c.Name, name)
	})
	if !found {
		return BoundCluster{}, false
	}
	return r.Clusters[i], true
}

// resolvedBinding is a binding that binds the policy through a valid placementRef.
type resolvedBinding struct {
	name     string
	ref      PlacementRef
	override Override
	// overrideField is the field the enforce override is written in.
	overrideField *field.Path
	clusters      []string
	entries       []*policyv1.Placement
	// excluded are the clusters every path of the binding excludes (nil when a
	// path excludes none): the binding does not bind the policy to them.
	excluded map[string]bool
}

// Resolve computes where policy is bound and with which remediationAction, from the
// PolicySets and PlacementBindings of its namespace (objects of other namespaces
// are ignored) and the decisions of their placements. It fails, naming every
// binding, when a binding that binds the policy has an override that does not
// normalise; it then returns no resolution, so that a caller never unbinds
// clusters because of bad input. See the package documentation for the rules.
func Resolve(policy *policyv1.Policy, sets []policyv1beta1.PolicySet, bindings []policyv1.PlacementBinding, decisions Decisions) (*Resolution, error) {
	if policy == nil {
		return nil, errors.New("nil Policy")
	}
	unrestricted, restricted, err := bindingsOf(policy, sets, bindings, decisions)
	if err != nil {
		return nil, err
	}

	rollout := policy.Spec.Rollout()
	overridesApply := OverridesApply(rollout)
	res := &Resolution{}
	if !overridesApply {
		res.IgnoredOverrides = ignoredOverrides(rollout.Type, unrestricted, restricted)
	}
	largest := 0 // the bound clusters are at least the largest non-restricted selection
	for _, b := range unrestricted {
		largest = max(largest, len(b.clusters))
	}
	clusters := make([]BoundCluster, 0, largest)
	index := make(map[string]int, largest)
	// placedBy are, for each cluster a path excludes, the bindings that bind it.
	placedBy := map[string][]string{}
	excludedSomewhere := excludedOnSomePath(unrestricted, restricted)
	for _, b := range unrestricted {
		if !slices.Contains(res.BindingPlacements, b.ref) {
			res.BindingPlacements = append(res.BindingPlacements, b.ref)
			res.excludedFrom = withExcluded(res.excludedFrom, b.ref, b.excluded)
		} else if excluded := res.excludedFrom[b.ref]; len(excluded) > 0 {
			maps.DeleteFunc(excluded, func(name string, _ bool) bool { return !b.excluded[name] })
		}
		enforce := overridesApply && b.override.Enforce
		for _, name := range b.clusters {
			if name == "" || b.excluded[name] {
				continue
			}
			if excludedSomewhere[name] {
				placedBy[name] = append(placedBy[name], b.name)
			}
			i, seen := index[name]
			if !seen {
				i = len(clusters)
				index[name] = i
				clusters = append(clusters, BoundCluster{Name: name})
			}
			if enforce {
				clusters[i].EnforcedBy = append(clusters[i].EnforcedBy, b.name)
			}
		}
		res.Placements = append(res.Placements, b.entries...)
	}
	for _, b := range restricted {
		enforce := overridesApply && b.override.Enforce
		overlaps := false
		for _, name := range b.clusters {
			i, bound := index[name]
			if !bound || b.excluded[name] {
				continue
			}
			overlaps = true
			if enforce {
				clusters[i].EnforcedBy = append(clusters[i].EnforcedBy, b.name)
			}
		}
		if overlaps {
			res.Placements = append(res.Placements, b.entries...)
		}
	}

	if allowed, restricted := AllowedClusters(policy.Annotations); restricted {
		clusters = slices.DeleteFunc(clusters, func(c BoundCluster) bool { return !allowed[c.Name] })
	}

	listedExclusions := map[string]bool{}
	for _, entry := range res.Placements {
		for _, e := range entry.Exclusions {
			listedExclusions[e.ClusterName] = true
		}
	}
	rootAction := policy.Spec.RemediationAction
	for i := range clusters {
		c := &clusters[i]
		if listedExclusions[c.Name] {
			c.RemainingBindings = placedBy[c.Name]
			slices.Sort(c.RemainingBindings)
			c.RemainingBindings = slices.Compact(c.RemainingBindings)
		}
		c.RemediationAction = rootAction
		if len(c.EnforcedBy) > 0 {
			slices.Sort(c.EnforcedBy)
			c.EnforcedBy = slices.Compact(c.EnforcedBy)
			if !rootAction.IsEnforce() {
				c.RemediationAction = overrideAction
			}
		}
	}
	slices.SortFunc(clusters, func(a, b BoundCluster) int { return cmp.Compare(a.Name, b.Name) })
	if len(clusters) > 0 {
		res.Clusters = clusters
	}
	slices.SortFunc(res.Placements, comparePlacements)
	slices.SortFunc(res.BindingPlacements, comparePlacementRefs)
	return res, nil
}

// ignoredOverrides lists the enforce overrides of the bindings, which a
// rollout strategy of type strategy (not All) ignores, sorted by binding.
func ignoredOverrides(strategy clusterv1alpha1.RolloutType, lists ...[]resolvedBinding) []IgnoredOverride {
	var out []IgnoredOverride
	for _, list := range lists {
		for _, b := range list {
			if b.override.Enforce {
				out = append(out, IgnoredOverride{Binding: b.name, Field: b.overrideField, Strategy: strategy})
			}
		}
	}
	slices.SortFunc(out, func(a, b IgnoredOverride) int { return cmp.Compare(a.Binding, b.Binding) })
	return out
}

// bindingsOf returns the bindings that bind policy through a valid placementRef,
// split into non-restricted and restricted ones, each with the decisions of its
// placement (none when the policy is disabled). It fails with the override errors
// of all of them.
func bindingsOf(policy *policyv1.Policy, sets []policyv1beta1.PolicySet, bindings []policyv1.PlacementBinding, decisions Decisions) (unrestricted, restricted []resolvedBinding, err error) {
	setsWithPolicy := setsContaining(policy, sets)
	exclusions := exclusionsOf(policy, sets)

	var errs []error
	for i := range bindings {
		pb := &bindings[i]
		ref, ok := readRef(pb, policy)
		if !ok {
			continue
		}
		entries := placementEntries(pb, ref, policy.Name, setsWithPolicy)
		if len(entries) == 0 {
			continue
		}
		override, fieldErrs := Normalize(pb)
		if len(fieldErrs) > 0 {
			errs = append(errs, fmt.Errorf("PlacementBinding %s: %w", bindingRef(pb), fieldErrs.ToAggregate()))
			continue
		}
		resolved := resolvedBinding{name: pb.Name, ref: ref, override: override, overrideField: overrideField(pb),
			entries: entries, excluded: applyExclusions(entries, exclusions)}
		if !policy.Spec.Disabled {
			resolved.clusters = decisions[ref]
		}
		if override.Restricted {
			restricted = append(restricted, resolved)
		} else {
			unrestricted = append(unrestricted, resolved)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return unrestricted, restricted, nil
}

// Placements returns the placements of the bindings that bind policy (restricted
// ones included), each once, sorted: those whose decisions Resolve reads. A
// caller reads these decisions and no others.
func Placements(policy *policyv1.Policy, sets []policyv1beta1.PolicySet, bindings []policyv1.PlacementBinding) []PlacementRef {
	setsWithPolicy := setsContaining(policy, sets)
	var refs []PlacementRef
	for i := range bindings {
		pb := &bindings[i]
		ref, ok := readRef(pb, policy)
		if !ok || slices.Contains(refs, ref) {
			continue
		}
		for s := range Subjects(pb) {
			if bindsThrough(s, policy.Name, setsWithPolicy) {
				refs = append(refs, ref)
				break
			}
		}
	}
	slices.SortFunc(refs, comparePlacementRefs)
	return refs
}

// readRef returns the placement pb binds through when Resolve reads pb for
// policy: pb is in policy's namespace and OCM reads its placementRef (RefOf)
// and it names a placement.
func readRef(pb *policyv1.PlacementBinding, policy *policyv1.Policy) (PlacementRef, bool) {
	if pb.Namespace != policy.Namespace {
		return PlacementRef{}, false
	}
	ref, ok := RefOf(pb)
	return ref, ok && ref.Name != ""
}

// setsContaining returns the names of the PolicySets of policy's namespace that
// list policy.
func setsContaining(policy *policyv1.Policy, sets []policyv1beta1.PolicySet) map[string]bool {
	names := make(map[string]bool)
	for i := range sets {
		set := &sets[i]
		if set.Namespace != policy.Namespace {
			continue
		}
		if slices.Contains(set.Spec.Policies, policyv1.NonEmptyString(policy.Name)) {
			names[set.Name] = true
		}
	}
	return names
}

// RefOf returns the placement pb's placementRef names, and whether OCM reads
// it: kind Placement of API group cluster.open-cluster-management.io, or kind
// PlacementRule of apps.open-cluster-management.io. OCM ignores a binding whose
// kind and API group do not go together.
func RefOf(pb *policyv1.PlacementBinding) (PlacementRef, bool) {
	ref := pb.PlacementRef
	group, known := apiGroupOf(ref.Kind)
	return PlacementRef{Kind: ref.Kind, Name: ref.Name}, known && ref.APIGroup == group
}

// PlacementSubject returns the placementRef a PlacementBinding writes to bind
// through r: r's kind with its API group (RefOf reads it back as r).
func (r PlacementRef) PlacementSubject() policyv1.PlacementSubject {
	group, _ := apiGroupOf(r.Kind)
	return policyv1.PlacementSubject{APIGroup: group, Kind: r.Kind, Name: r.Name}
}

// apiGroupOf returns the API group of a kind a placementRef may name.
func apiGroupOf(kind string) (string, bool) {
	switch kind {
	case KindPlacement:
		return clusterv1beta1.GroupName, true
	case KindPlacementRule:
		return appsv1.GroupVersion.Group, true
	}
	return "", false
}

// RefOfEntry returns the placement a status.placement entry of a Resolution
// names.
func RefOfEntry(entry *policyv1.Placement) PlacementRef {
	if entry.PlacementRule != "" {
		return PlacementRef{Kind: KindPlacementRule, Name: entry.PlacementRule}
	}
	return PlacementRef{Kind: KindPlacement, Name: entry.Placement}
}

// Subjects yields the subjects of pb that OCM reads, in order: those of API
// group policy.open-cluster-management.io whose kind is Policy or PolicySet.
// Others bind nothing.
func Subjects(pb *policyv1.PlacementBinding) iter.Seq[policyv1.Subject] {
	return func(yield func(policyv1.Subject) bool) {
		for _, s := range pb.Subjects {
			if s.APIGroup != policyv1.GroupVersion.Group || (s.Kind != KindPolicy && s.Kind != KindPolicySet) {
				continue
			}
			if !yield(s) {
				return
			}
		}
	}
}

// bindsThrough reports whether subject s (one Subjects yields) binds the policy
// named policyName: it is that Policy, or a PolicySet listing it.
func bindsThrough(s policyv1.Subject, policyName string, setsWithPolicy map[string]bool) bool {
	if s.Kind == KindPolicy {
		return s.Name == policyName
	}
	return setsWithPolicy[s.Name]
}

// placementEntries returns the status.placement entries pb contributes for the
// policy named policyName: one if a Policy subject names it, plus one per distinct
// PolicySet subject whose set lists it. None means pb does not bind the policy.
func placementEntries(pb *policyv1.PlacementBinding, ref PlacementRef, policyName string, setsWithPolicy map[string]bool) []*policyv1.Placement {
	var entries []*policyv1.Placement
	newEntry := func(policySet string) *policyv1.Placement {
		entry := &policyv1.Placement{PlacementBinding: pb.Name, PolicySet: policySet}
		if ref.Kind == KindPlacement {
			entry.Placement = ref.Name
		} else {
			entry.PlacementRule = ref.Name
		}
		return entry
	}
	policySubject := false
	seenSets := make(map[string]bool)
	for subject := range Subjects(pb) {
		if !bindsThrough(subject, policyName, setsWithPolicy) {
			continue
		}
		switch {
		case subject.Kind == KindPolicy && !policySubject:
			policySubject = true
			entries = append(entries, newEntry(""))
		case subject.Kind == KindPolicySet && !seenSets[subject.Name]:
			seenSets[subject.Name] = true
			entries = append(entries, newEntry(subject.Name))
		}
	}
	return entries
}

func comparePlacementRefs(a, b PlacementRef) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
}

func comparePlacements(a, b *policyv1.Placement) int {
	return cmp.Or(
		cmp.Compare(a.PlacementBinding, b.PlacementBinding),
		cmp.Compare(a.Placement, b.Placement),
		cmp.Compare(a.PlacementRule, b.PlacementRule),
		cmp.Compare(a.PolicySet, b.PolicySet),
	)
}
