package dependency

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// PolicySets maps a PolicySet's namespace and name to the names of its member
// Policies, for Canonicalize.
type PolicySets map[types.NamespacedName][]string

// IndexPolicySets indexes sets by namespace and name. Nil entries are skipped;
// of two sets with the same namespace and name the first wins.
func IndexPolicySets(sets []*policyv1beta1.PolicySet) PolicySets {
	index := make(PolicySets, len(sets))
	for _, set := range sets {
		if set == nil {
			continue
		}
		key := types.NamespacedName{Namespace: set.Namespace, Name: set.Name}
		if _, dup := index[key]; dup {
			continue
		}
		members := make([]string, 0, len(set.Spec.Policies))
		for _, member := range set.Spec.Policies {
			members = append(members, string(member))
		}
		index[key] = members
	}
	return index
}

// Canonicalize rewrites the dependencies of a policy of the given namespace as the
// OCM hub does when it replicates the policy to a cluster namespace:
//
//   - a Policy dependency is renamed "<namespace>.<name>" with an empty
//     namespace, its namespace defaulting to the policy's; a name that already
//     contains "." is kept as written;
//   - a PolicySet dependency is replaced by one Policy dependency per member of
//     the set (same compliance), the set's namespace defaulting to the policy's;
//     a set missing from sets is kept as written;
//   - any other dependency is kept as written.
//
// A dependency on one of the policy group's kinds written without apiVersion
// (a spelling fleetpolicy accepts and OCM does not) gets the policy group's apiVersion
// first. Only dependencies of the policy group are rewritten. The result keeps the order
// of deps.
func Canonicalize(deps []policyv1.PolicyDependency, namespace string, sets PolicySets) []policyv1.PolicyDependency {
	out := make([]policyv1.PolicyDependency, 0, len(deps))
	for _, dep := range deps {
		out = append(out, canonicalize(dep, namespace, sets)...)
	}
	return out
}

func canonicalize(dep policyv1.PolicyDependency, namespace string, sets PolicySets) []policyv1.PolicyDependency {
	dep = withPolicyGroupAPIVersion(dep)
	if groupOf(dep.APIVersion) != policyGroup {
		return []policyv1.PolicyDependency{dep}
	}
	depNamespace := dep.Namespace
	if depNamespace == "" {
		depNamespace = namespace
	}
	switch dep.Kind {
	case kindPolicy:
		if strings.Contains(dep.Name, ".") {
			return []policyv1.PolicyDependency{dep}
		}
		dep.Name = replicatedName(depNamespace, dep.Name)
		dep.Namespace = ""
		return []policyv1.PolicyDependency{dep}
	case kindPolicySet:
		members, found := sets[types.NamespacedName{Namespace: depNamespace, Name: dep.Name}]
		if !found {
			return []policyv1.PolicyDependency{dep}
		}
		out := make([]policyv1.PolicyDependency, 0, len(members))
		for _, member := range members {
			out = append(out, policyv1.PolicyDependency{
				APIVersion: policyv1.GroupVersion.String(),
				Kind:       kindPolicy,
				Name:       replicatedName(depNamespace, member),
				Compliance: dep.Compliance,
			})
		}
		return out
	}
	return []policyv1.PolicyDependency{dep}
}

// kindsWithoutAPIVersion are the policy group's kinds a dependency may name
// without an apiVersion ("kind: Policy"), a spelling fleetpolicy accepts and OCM does not.
var kindsWithoutAPIVersion = []string{kindPolicy, kindPolicySet, "ConfigurationPolicy", "CertificatePolicy", "OperatorPolicy"}

// withPolicyGroupAPIVersion gives a dependency written without an apiVersion on one of
// the policy group's kinds the policy group's apiVersion, so that this
// spelling is read, gated and validated exactly like OCM's. Any other
// dependency is returned as written.
func withPolicyGroupAPIVersion(dep policyv1.PolicyDependency) policyv1.PolicyDependency {
	if dep.APIVersion == "" && slices.Contains(kindsWithoutAPIVersion, dep.Kind) {
		dep.APIVersion = policyv1.GroupVersion.String()
	}
	return dep
}
