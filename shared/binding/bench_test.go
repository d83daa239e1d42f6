package binding

import (
	"fmt"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

const benchClusters = 3000

// benchFleet is one policy bound to 3,000 clusters: directly through a Placement
// split over decision groups, again through a PolicySet, and with a 500-cluster
// enforcing binding and a 300-cluster restricted enforcing binding (half of whose
// clusters are outside the fleet).
func benchFleet() (*policyv1.Policy, []policyv1beta1.PolicySet, []policyv1.PlacementBinding, Decisions) {
	names := make([]string, benchClusters)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%04d", (i*7919)%benchClusters) // unsorted, as decisions arrive
	}
	outside := make([]string, 150)
	for i := range outside {
		outside[i] = fmt.Sprintf("other-%03d", i)
	}
	set := policyv1beta1.PolicySet{}
	set.Namespace, set.Name = testNamespace, "set"
	set.Spec.Policies = []policyv1.NonEmptyString{testPolicy}
	viaSet := bind("via-set", placement("fleet"))
	viaSet.Subjects = []policyv1.Subject{setSubject("set")}
	bindings := []policyv1.PlacementBinding{
		bind("fleet", placement("fleet")),
		viaSet,
		enforcing(bind("wave-1", placement("wave-1"))),
		restrictedEnforcing(bind("canary", placement("canary"))),
	}
	decisions := Decisions{
		placement("fleet"):  names,
		placement("wave-1"): names[:500],
		placement("canary"): append(append([]string{}, names[1000:1150]...), outside...),
	}
	return rootPolicy(inform), []policyv1beta1.PolicySet{set}, bindings, decisions
}

func BenchmarkResolve(b *testing.B) {
	policy, sets, bindings, decisions := benchFleet()
	b.ReportAllocs()
	for b.Loop() {
		res, err := Resolve(policy, sets, bindings, decisions)
		if err != nil || len(res.Clusters) != benchClusters {
			b.Fatalf("Resolve() = %d clusters, %v", len(res.Clusters), err)
		}
	}
}

func BenchmarkRootStatus(b *testing.B) {
	policy, sets, bindings, decisions := benchFleet()
	res, err := Resolve(policy, sets, bindings, decisions)
	if err != nil {
		b.Fatal(err)
	}
	observed := make(map[string]policyv1.ComplianceState, benchClusters)
	for _, c := range res.Clusters {
		observed[c.Name] = policyv1.Compliant
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, compliant := res.RootStatus(observed); compliant != policyv1.Compliant {
			b.Fatalf("RootStatus() compliant = %q", compliant)
		}
	}
}
