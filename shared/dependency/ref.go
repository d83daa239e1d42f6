package dependency

import (
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// policyGroup is the API group of Policy, PolicySet and the policy engine kinds.
var policyGroup = policyv1.GroupVersion.Group

const (
	kindPolicy    = "Policy"
	kindPolicySet = "PolicySet"
)

// Ref identifies an object a template can wait for. The version is not part of
// the identity; for the kinds that live in the managed cluster's namespace the
// namespace is not either (see TargetOf).
type Ref struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// String renders the Ref as users read it in messages: "Policy default.a",
// "ConfigurationPolicy cfg", "K8sRequiredLabels ns/name".
func (r Ref) String() string {
	if r.Namespace != "" {
		return r.Kind + " " + r.Namespace + "/" + r.Name
	}
	return r.Kind + " " + r.Name
}

// ObjectRef is the Ref of an existing object with the given apiVersion, kind,
// namespace and name. A Policy is named by its replicated name
// "<namespace>.<name>", as dependencies name it.
func ObjectRef(apiVersion, kind, namespace, name string) Ref {
	group := groupOf(apiVersion)
	if group == policyGroup && kind == kindPolicy {
		return Ref{Group: group, Kind: kind, Name: replicatedName(namespace, name)}
	}
	if livesInClusterNamespace(group, kind) {
		namespace = ""
	}
	return Ref{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

// TargetOf is the Ref of the object a canonical dependency (see Canonicalize)
// waits for.
func TargetOf(dep policyv1.PolicyDependency) Ref {
	group := groupOf(dep.APIVersion)
	namespace := dep.Namespace
	if livesInClusterNamespace(group, dep.Kind) {
		namespace = ""
	}
	return Ref{Group: group, Kind: dep.Kind, Namespace: namespace, Name: dep.Name}
}

// Names reports whether the loose reference {kind, namespace, name}, written
// without an apiVersion (as in a function's configuration), names r when read as
// a dependency declared by a policy of namespace from.
func (r Ref) Names(kind, namespace, name, from string) bool {
	dep := policyv1.PolicyDependency{Kind: kind, Namespace: namespace, Name: name}
	if r.Group != "" {
		dep.APIVersion = r.Group + "/v1"
	}
	for _, c := range Canonicalize([]policyv1.PolicyDependency{dep}, from, nil) {
		if TargetOf(c) == r {
			return true
		}
	}
	return false
}

// livesInClusterNamespace reports whether objects of this kind live in the
// managed cluster's namespace, where the cluster looks them up whatever
// namespace a dependency names: the policy group's kinds whose name ends in
// "Policy".
func livesInClusterNamespace(group, kind string) bool {
	return group == policyGroup && strings.HasSuffix(kind, kindPolicy)
}

// replicatedName is the name of a Policy once replicated to a cluster namespace.
// A policy without a namespace keeps its name.
func replicatedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "." + name
}

// groupOf returns the group of an apiVersion ("" for the core group).
func groupOf(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}
