package binding

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// exclusionsOf returns, for each PolicySet of policy's namespace that lists
// policy and excludes it from some clusters (spec.exclusions), those clusters,
// sorted and without duplicates. Several exclusions naming the policy add up,
// as in OCM (its webhook refuses them; the CRD refuses them here, but a set that
// never met an API server may have them).
func exclusionsOf(policy *policyv1.Policy, sets []policyv1beta1.PolicySet) map[string][]string {
	var out map[string][]string
	for i := range sets {
		set := &sets[i]
		if set.Namespace != policy.Namespace || !slices.Contains(set.Spec.Policies, policyv1.NonEmptyString(policy.Name)) {
			continue
		}
		var clusters []string
		for _, e := range set.Spec.Exclusions {
			if e.PolicyName != policy.Name {
				continue
			}
			for _, name := range e.ClusterNames {
				if name != "" {
					clusters = append(clusters, string(name))
				}
			}
		}
		if len(clusters) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		slices.Sort(clusters)
		out[set.Name] = slices.Compact(clusters)
	}
	return out
}

// applyExclusions fills the exclusions of a binding's PolicySet entries from
// exclusions (exclusionsOf) and returns the clusters that every entry (every
// path through which the binding binds the policy) excludes: nil when one
// excludes none, such as a Policy subject.
func applyExclusions(entries []*policyv1.Placement, exclusions map[string][]string) map[string]bool {
	var onEveryPath map[string]bool
	for i, entry := range entries {
		var excluded []string
		if entry.PolicySet != "" {
			excluded = exclusions[entry.PolicySet]
		}
		for _, name := range excluded {
			entry.Exclusions = append(entry.Exclusions, policyv1.PolicyExclusion{ClusterName: name})
		}
		if i == 0 {
			onEveryPath = make(map[string]bool, len(excluded))
			for _, name := range excluded {
				onEveryPath[name] = true
			}
			continue
		}
		maps.DeleteFunc(onEveryPath, func(name string, _ bool) bool {
			_, found := slices.BinarySearch(excluded, name)
			return !found
		})
	}
	if len(onEveryPath) == 0 {
		return nil
	}
	return onEveryPath
}

// excludedOnSomePath returns the clusters that some path of some binding
// excludes; nil when none does.
func excludedOnSomePath(groups ...[]resolvedBinding) map[string]bool {
	var out map[string]bool
	for _, bindings := range groups {
		for _, b := range bindings {
			for _, entry := range b.entries {
				for _, e := range entry.Exclusions {
					if out == nil {
						out = map[string]bool{}
					}
					out[e.ClusterName] = true
				}
			}
		}
	}
	return out
}

// withExcluded records in m (created when nil) that placement ref excludes
// the clusters excluded; nothing when it excludes none.
func withExcluded(m map[PlacementRef]map[string]bool, ref PlacementRef, excluded map[string]bool) map[PlacementRef]map[string]bool {
	if len(excluded) == 0 {
		return m
	}
	if m == nil {
		m = map[PlacementRef]map[string]bool{}
	}
	m[ref] = maps.Clone(excluded)
	return m
}

// SetExclusions returns a PolicySet's status.exclusions: one entry per policy
// its spec.exclusions name, sorted by policy name, with the clusters of every
// exclusion naming it, sorted and without duplicates or empty names; a policy
// left with no cluster has no entry. Nil when the set excludes nothing.
func SetExclusions(set *policyv1beta1.PolicySet) []policyv1beta1.PolicySetStatusExclusion {
	clusters := map[string][]policyv1.NonEmptyString{}
	for _, e := range set.Spec.Exclusions {
		for _, name := range e.ClusterNames {
			if name != "" && e.PolicyName != "" {
				clusters[e.PolicyName] = append(clusters[e.PolicyName], name)
			}
		}
	}
	var out []policyv1beta1.PolicySetStatusExclusion
	for _, policy := range slices.Sorted(maps.Keys(clusters)) {
		names := clusters[policy]
		slices.Sort(names)
		out = append(out, policyv1beta1.PolicySetStatusExclusion{
			PolicyName: policyv1.NonEmptyString(policy), Clusters: slices.Compact(names)})
	}
	return out
}

// OCM's PolicySet webhook messages.
const (
	msgExclusionNotInSet  = "policy in spec.exclusions is not listed in spec.policies"
	msgExclusionDuplicate = "policy in spec.exclusions has a duplicate entry"
)

// ValidateExclusions checks a PolicySet's spec.exclusions as OCM's PolicySet
// webhook does: each policyName is in spec.policies, and no policyName is named
// twice. Each error names the field (spec.exclusions[i].policyName) and says
// what OCM's webhook says. On a hub the API server refuses such a set (the CRD
// refuses a duplicate, manifests/hub's ValidatingAdmissionPolicy a policy not in
// the set); this is the same rule for objects that never met one.
func ValidateExclusions(set *policyv1beta1.PolicySet) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "exclusions")
	seen := map[string]bool{}
	for i, e := range set.Spec.Exclusions {
		name := path.Index(i).Child("policyName")
		if seen[e.PolicyName] {
			errs = append(errs, field.Invalid(name, e.PolicyName, msgExclusionDuplicate))
		}
		seen[e.PolicyName] = true
		if !slices.Contains(set.Spec.Policies, policyv1.NonEmptyString(e.PolicyName)) {
			errs = append(errs, field.Invalid(name, e.PolicyName, msgExclusionNotInSet))
		}
	}
	return errs
}
