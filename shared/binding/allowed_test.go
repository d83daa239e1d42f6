package binding

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestResolveHonoursClustersAnnotation(t *testing.T) {
	bindingTo := func(rule string) policyv1.PlacementBinding {
		return policyv1.PlacementBinding{
			ObjectMeta:   metav1.ObjectMeta{Namespace: "ns", Name: "pb-" + rule},
			PlacementRef: policyv1.PlacementSubject{APIGroup: "apps.open-cluster-management.io", Kind: KindPlacementRule, Name: rule},
			Subjects:     []policyv1.Subject{{APIGroup: "policy.open-cluster-management.io", Kind: "Policy", Name: "p"}},
		}
	}
	decisions := Decisions{{Kind: KindPlacementRule, Name: "r"}: {"a", "b", "c"}}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        []string
	}{
		{"no annotation binds every selected cluster", nil, []string{"a", "b", "c"}},
		{"annotation narrows", map[string]string{ClustersAnnotation: "c, a"}, []string{"a", "c"}},
		{"annotation never adds", map[string]string{ClustersAnnotation: "a,z"}, []string{"a"}},
		{"blanks ignored", map[string]string{ClustersAnnotation: " b ,, "}, []string{"b"}},
		{"empty annotation allows none", map[string]string{ClustersAnnotation: ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Annotations: tc.annotations}}
			res, err := Resolve(p, nil, []policyv1.PlacementBinding{bindingTo("r")}, decisions)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range res.Clusters {
				got = append(got, c.Name)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("bound %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResolveBindingPlacements(t *testing.T) {
	pb := func(name, rule string, restricted bool) policyv1.PlacementBinding {
		b := policyv1.PlacementBinding{
			ObjectMeta:   metav1.ObjectMeta{Namespace: "ns", Name: name},
			PlacementRef: policyv1.PlacementSubject{APIGroup: "apps.open-cluster-management.io", Kind: KindPlacementRule, Name: rule},
			Subjects:     []policyv1.Subject{{APIGroup: "policy.open-cluster-management.io", Kind: "Policy", Name: "p"}},
		}
		if restricted {
			b.SubFilter = policyv1.Restricted
			b.BindingOverrides.RemediationAction = "Enforce"
		}
		return b
	}
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	res, err := Resolve(p, nil, []policyv1.PlacementBinding{pb("b2", "z", false), pb("b1", "a", false), pb("b3", "a", false), pb("r", "only-restricted", true)},
		Decisions{{Kind: KindPlacementRule, Name: "a"}: {"c1"}, {Kind: KindPlacementRule, Name: "z"}: {"c2"}, {Kind: KindPlacementRule, Name: "only-restricted"}: {"c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.BindingPlacements); got != "[{PlacementRule a} {PlacementRule z}]" {
		t.Fatalf("BindingPlacements = %s, want the non-restricted placements, once each, sorted", got)
	}
}
