package dependency_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

// configTemplate is a policy template holding a ConfigurationPolicy named name.
func configTemplate(name string, extra ...policyv1.PolicyDependency) *policyv1.PolicyTemplate {
	raw := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":%q}}`, name)
	return &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}, ExtraDependencies: extra}
}

// A template of policy "install-app" waits until policy "install-operator" is
// Compliant. On the managed cluster the dependency is the replica
// policies.install-operator; while it is NonCompliant the template is Pending.
func ExampleEvaluate() {
	p := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "install-app"},
		Spec: policyv1.PolicySpec{
			Dependencies: []policyv1.PolicyDependency{{
				APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy",
				Name: "install-operator", Compliance: policyv1.Compliant,
			}},
			PolicyTemplates: []*policyv1.PolicyTemplate{configTemplate("app-config")},
		},
	}
	reqs, issues := dependency.Requirements(p, 0, nil)
	for _, r := range reqs {
		fmt.Printf("%s waits for %s to be %s\n", r.Field, r.Target, r.Compliance)
	}
	fmt.Println("issues:", len(issues))

	operator := reqs[0].Target
	for _, seen := range []dependency.Observation{
		{},
		{Found: true, Compliance: policyv1.NonCompliant},
		{Found: true, Compliance: policyv1.Compliant},
	} {
		gate := dependency.Evaluate(reqs, false, map[dependency.Ref]dependency.Observation{operator: seen})
		fmt.Printf("allowed=%v compliance=%q %s\n", gate.Allowed(), gate.Compliance(), gate.Message())
	}
	// Output:
	// spec.dependencies[0] waits for Policy policies.install-operator to be Compliant
	// issues: 0
	// allowed=false compliance="Pending" Dependencies were not satisfied: 1 is still pending (Policy policies.install-operator)
	// allowed=false compliance="Pending" Dependencies were not satisfied: 1 is still pending (Policy policies.install-operator)
	// allowed=true compliance=""
}

// A Graph of the policies of a namespace finds the dependency cycles no
// cluster could ever get out of, naming the dependency that closes each.
func ExampleGraph_Cycles() {
	onPolicy := func(name string) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Name: name, Compliance: policyv1.Compliant}
	}
	policy := func(name string, deps ...policyv1.PolicyDependency) *policyv1.Policy {
		return &policyv1.Policy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: name},
			Spec:       policyv1.PolicySpec{Dependencies: deps, PolicyTemplates: []*policyv1.PolicyTemplate{configTemplate(name)}},
		}
	}
	g := dependency.Build([]*policyv1.Policy{
		policy("network", onPolicy("storage")),
		policy("storage", onPolicy("network")),
		policy("app", onPolicy("storage")),
	}, nil)
	for _, c := range g.Cycles() {
		fmt.Println(c.Path())
		d := c.Declared()
		fmt.Printf("declared by %s %s: %s waits for %s\n", d.Policy, d.Field, d.From, d.To)
	}
	_, ok := g.ApplyOrder()
	fmt.Println("has an apply order:", ok)
	// Output:
	// Policy policies.network -> ConfigurationPolicy network -> Policy policies.storage -> ConfigurationPolicy storage -> Policy policies.network
	// declared by policies/network spec.dependencies[0]: ConfigurationPolicy network waits for Policy policies.storage
	// has an apply order: false
}
