package dependency

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

const policyAPI = "policy.open-cluster-management.io/v1"

// onPolicy is a dependency on a Policy waiting for the given state.
func onPolicy(name string, state policyv1.ComplianceState) policyv1.PolicyDependency {
	return policyv1.PolicyDependency{APIVersion: policyAPI, Kind: "Policy", Name: name, Compliance: state}
}

// onConfig is a dependency on a ConfigurationPolicy waiting for the given state.
func onConfig(name string, state policyv1.ComplianceState) policyv1.PolicyDependency {
	return policyv1.PolicyDependency{APIVersion: policyAPI, Kind: "ConfigurationPolicy", Name: name, Compliance: state}
}

// onSet is a dependency on a PolicySet waiting for the given state.
func onSet(name string, state policyv1.ComplianceState) policyv1.PolicyDependency {
	return policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: "PolicySet", Name: name, Compliance: state}
}

// config is a template holding a ConfigurationPolicy of the given name.
func config(name string, extra ...policyv1.PolicyDependency) *policyv1.PolicyTemplate {
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": policyAPI, "kind": "ConfigurationPolicy", "metadata": map[string]any{"name": name},
	})
	return &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: raw}, ExtraDependencies: extra}
}

// ignoringPending returns t with ignorePending set.
func ignoringPending(t *policyv1.PolicyTemplate) *policyv1.PolicyTemplate {
	t.IgnorePending = true
	return t
}

// policy is a Policy in namespace "default" unless name is "ns/name".
func policy(name string, deps []policyv1.PolicyDependency, templates ...*policyv1.PolicyTemplate) *policyv1.Policy {
	ns, n := splitName(name)
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n},
		Spec:       policyv1.PolicySpec{Dependencies: deps, PolicyTemplates: templates},
	}
}

// policySet is a PolicySet in namespace "default" unless name is "ns/name".
func policySet(name string, members ...string) *policyv1beta1.PolicySet {
	ns, n := splitName(name)
	set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}
	for _, m := range members {
		set.Spec.Policies = append(set.Spec.Policies, policyv1.NonEmptyString(m))
	}
	return set
}

func splitName(name string) (string, string) {
	for i := range name {
		if name[i] == '/' {
			return name[:i], name[i+1:]
		}
	}
	return "default", name
}

func policyRef(replicated string) Ref {
	return Ref{Group: "policy.open-cluster-management.io", Kind: "Policy", Name: replicated}
}

func configRef(name string) Ref {
	return Ref{Group: "policy.open-cluster-management.io", Kind: "ConfigurationPolicy", Name: name}
}

// dependencyField is the path of the policy's dependency i.
func dependencyField(i int) *field.Path { return field.NewPath("spec", "dependencies").Index(i) }

// extraDependencyField is the path of extra dependency i of template t.
func extraDependencyField(t, i int) *field.Path {
	return field.NewPath("spec", "policy-templates").Index(t).Child("extraDependencies").Index(i)
}
