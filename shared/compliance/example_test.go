package compliance_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/compliance"
)

// The compliance of a whole (a policy's templates, a root's clusters) from its
// parts: NonCompliant wins over Pending, which wins over unknown ("").
func ExampleAggregate() {
	for _, parts := range [][]policyv1.ComplianceState{
		{policyv1.Compliant, policyv1.Compliant},
		{policyv1.Compliant, policyv1.Pending, policyv1.NonCompliant},
		{policyv1.Compliant, policyv1.Pending},
		{policyv1.Compliant, ""},
		nil,
	} {
		fmt.Printf("%v -> %q\n", parts, compliance.Aggregate(parts))
	}
	// Output:
	// [Compliant Compliant] -> "Compliant"
	// [Compliant Pending NonCompliant] -> "NonCompliant"
	// [Compliant Pending] -> "Pending"
	// [Compliant ] -> ""
	// [] -> ""
}

// A PolicySet's compliance is its members' root compliance, aggregated; a
// member that does not exist or is disabled does not count.
func ExamplePolicySet() {
	set := &policyv1beta1.PolicySet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "baseline"},
		Spec:       policyv1beta1.PolicySetSpec{Policies: []policyv1.NonEmptyString{"require-labels", "install-operator", "paused", "not-written-yet"}},
	}
	root := func(name string, state policyv1.ComplianceState, disabled bool) *policyv1.Policy {
		p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: name}}
		p.Spec.Disabled = disabled
		p.Status.ComplianceState = state
		return p
	}
	policies := map[string]*policyv1.Policy{
		"require-labels":   root("require-labels", policyv1.Compliant, false),
		"install-operator": root("install-operator", policyv1.Pending, false),
		"paused":           root("paused", policyv1.NonCompliant, true),
	}
	fmt.Println(compliance.PolicySet(set, policies))
	policies["install-operator"].Status.ComplianceState = policyv1.Compliant
	fmt.Println(compliance.PolicySet(set, policies))
	// Output:
	// Pending
	// Compliant
}
