package compliance_test

import (
	"fmt"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
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
