package binding_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// A root policy in inform mode, bound to every production cluster, with a second,
// restricted binding that enforces it on the canary clusters only.
func ExampleResolve() {
	policy := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "require-labels"},
		Spec:       policyv1.PolicySpec{RemediationAction: "inform"},
	}
	subject := []policyv1.Subject{{APIGroup: "policy.open-cluster-management.io", Kind: "Policy", Name: "require-labels"}}
	production := binding.PlacementRef{Kind: binding.KindPlacement, Name: "production"}
	canary := binding.PlacementRef{Kind: binding.KindPlacement, Name: "canary"}
	bindings := []policyv1.PlacementBinding{
		{
			ObjectMeta:   metav1.ObjectMeta{Namespace: "policies", Name: "bind-production"},
			PlacementRef: production.PlacementSubject(),
			Subjects:     subject,
		},
		{
			ObjectMeta:       metav1.ObjectMeta{Namespace: "policies", Name: "enforce-canary"},
			PlacementRef:     canary.PlacementSubject(),
			Subjects:         subject,
			BindingOverrides: policyv1.BindingOverrides{RemediationAction: "enforce"},
			SubFilter:        policyv1.Restricted,
		},
	}
	// What the PlacementDecisions of each Placement select. The canary Placement
	// also selects "staging", which no non-restricted binding binds.
	decisions := binding.Decisions{
		production: {"prod-east", "prod-west"},
		canary:     {"prod-east", "staging"},
	}

	res, err := binding.Resolve(policy, nil, bindings, decisions)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Clusters {
		fmt.Printf("%s: %s %v\n", c.Name, c.RemediationAction, c.EnforcedBy)
	}
	fmt.Println("rollout walks:", res.BindingPlacements)
	// Output:
	// prod-east: enforce [enforce-canary]
	// prod-west: inform []
	// rollout walks: [{Placement production}]
}

// Both spellings of the selective-enforcement override normalise to the same
// Override; a value OCM does not accept is refused with the field it came from.
func ExampleNormalize() {
	ocm := &policyv1.PlacementBinding{
		BindingOverrides: policyv1.BindingOverrides{RemediationAction: "Enforce"},
		SubFilter:        policyv1.Restricted,
	}
	restricted := true
	other := &policyv1.PlacementBinding{
		RemediationActionOverride: &policyv1.RemediationActionOverride{RemediationAction: "enforce", SubFilter: &restricted},
	}
	bad := &policyv1.PlacementBinding{
		ObjectMeta:       metav1.ObjectMeta{Namespace: "policies", Name: "inform-everywhere"},
		BindingOverrides: policyv1.BindingOverrides{RemediationAction: "inform"},
	}
	for _, pb := range []*policyv1.PlacementBinding{ocm, other, bad} {
		o, errs := binding.Normalize(pb)
		fmt.Printf("%+v %v\n", o, errs.ToAggregate())
	}
	// Output:
	// {Enforce:true Restricted:true} <nil>
	// {Enforce:true Restricted:true} <nil>
	// {Enforce:false Restricted:false} bindingOverrides.remediationAction: Unsupported value: "inform": supported values: "enforce"
}
