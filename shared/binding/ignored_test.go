package binding

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// TestIgnoredOverrides: Resolution.IgnoredOverrides lists exactly the enforce
// overrides of the bindings that bind the policy when its rollout strategy is
// not All, with the field each is written in; what is enforced is unchanged.
func TestIgnoredOverrides(t *testing.T) {
	strategy := func(p *policyv1.Policy, rollout clusterv1alpha1.RolloutType) *policyv1.Policy {
		p.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: rollout}
		return p
	}
	ownSpelling := func(pb policyv1.PlacementBinding, subFilter bool) policyv1.PlacementBinding {
		fleetpolicySpelling(&pb, true, &subFilter)
		return pb
	}
	bothSpellings := func(pb policyv1.PlacementBinding) policyv1.PlacementBinding {
		fleetpolicySpelling(&pb, true, nil)
		ocmSpelling(&pb, true, nil)
		return pb
	}
	narrowOnly := func(pb policyv1.PlacementBinding) policyv1.PlacementBinding {
		pb.SubFilter = policyv1.Restricted
		return pb
	}
	ofOther := func(pb policyv1.PlacementBinding) policyv1.PlacementBinding {
		pb.Subjects = []policyv1.Subject{policySubject("other")}
		return pb
	}
	viaSet := func(pb policyv1.PlacementBinding) policyv1.PlacementBinding {
		pb.Subjects = []policyv1.Subject{setSubject("set")}
		return pb
	}
	set := policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "set"},
		Spec: policyv1beta1.PolicySetSpec{Policies: []policyv1.NonEmptyString{testPolicy}}}
	initial := bind("initial", rule("placementrule-initial"))
	ocmField, ownField := field.NewPath("bindingOverrides", "remediationAction"), field.NewPath("remediationActionOverride", "remediationAction")

	tests := []struct {
		name     string
		policy   *policyv1.Policy
		bindings []policyv1.PlacementBinding
		want     []IgnoredOverride
	}{
		{name: "no strategy: overrides apply", policy: rootPolicy(inform),
			bindings: []policyv1.PlacementBinding{initial, enforcing(bind("sub", rule("placementrule-sub")))}},
		{name: "All: overrides apply", policy: strategy(rootPolicy(inform), clusterv1alpha1.All),
			bindings: []policyv1.PlacementBinding{initial, enforcing(bind("sub", rule("placementrule-sub")))}},
		{name: "Progressive ignores OCM's spelling", policy: strategy(rootPolicy(inform), clusterv1alpha1.Progressive),
			bindings: []policyv1.PlacementBinding{initial, enforcing(bind("sub", rule("placementrule-sub")))},
			want:     []IgnoredOverride{{Binding: "sub", Field: ocmField, Strategy: clusterv1alpha1.Progressive}}},
		{name: "ProgressivePerGroup ignores fleetpolicy's spelling, restricted or not, sorted by binding",
			policy: strategy(rootPolicy(enforce), clusterv1alpha1.ProgressivePerGroup),
			bindings: []policyv1.PlacementBinding{initial, ownSpelling(bind("z-narrow", rule("placementrule-extended")), true),
				ownSpelling(bind("b-wide", rule("placementrule-sub-2")), false)},
			want: []IgnoredOverride{{Binding: "b-wide", Field: ownField, Strategy: clusterv1alpha1.ProgressivePerGroup},
				{Binding: "z-narrow", Field: ownField, Strategy: clusterv1alpha1.ProgressivePerGroup}}},
		{name: "both spellings: OCM's field is named", policy: strategy(rootPolicy(inform), clusterv1alpha1.Progressive),
			bindings: []policyv1.PlacementBinding{initial, bothSpellings(bind("sub", rule("placementrule-sub")))},
			want:     []IgnoredOverride{{Binding: "sub", Field: ocmField, Strategy: clusterv1alpha1.Progressive}}},
		{name: "a binding through a PolicySet", policy: strategy(rootPolicy(inform), clusterv1alpha1.Progressive),
			bindings: []policyv1.PlacementBinding{initial, enforcing(viaSet(bind("set-enforce", rule("placementrule-sub"))))},
			want:     []IgnoredOverride{{Binding: "set-enforce", Field: ocmField, Strategy: clusterv1alpha1.Progressive}}},
		{name: "a disabled policy's bindings too", policy: func() *policyv1.Policy {
			p := strategy(rootPolicy(inform), clusterv1alpha1.Progressive)
			p.Spec.Disabled = true
			return p
		}(),
			bindings: []policyv1.PlacementBinding{initial, enforcing(bind("sub", rule("placementrule-sub")))},
			want:     []IgnoredOverride{{Binding: "sub", Field: ocmField, Strategy: clusterv1alpha1.Progressive}}},
		{name: "not a binding without enforce, nor one of another policy", policy: strategy(rootPolicy(inform), clusterv1alpha1.Progressive),
			bindings: []policyv1.PlacementBinding{initial, narrowOnly(bind("narrow", rule("placementrule-extended"))),
				enforcing(ofOther(bind("other", rule("placementrule-sub"))))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Resolve(tt.policy, []policyv1beta1.PolicySet{set}, tt.bindings, exampleDecisions)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.IgnoredOverrides, tt.want) {
				t.Errorf("IgnoredOverrides = %v, want %v", res.IgnoredOverrides, tt.want)
			}
			for _, c := range res.Clusters {
				if len(tt.want) > 0 && len(c.EnforcedBy) > 0 {
					t.Errorf("cluster %s enforced by %v, although the strategy ignores overrides", c.Name, c.EnforcedBy)
				}
			}
		})
	}
}

func TestIgnoredOverrideString(t *testing.T) {
	o := IgnoredOverride{Binding: "sub", Field: field.NewPath("bindingOverrides", "remediationAction"), Strategy: clusterv1alpha1.Progressive}
	want := "PlacementBinding sub: bindingOverrides.remediationAction enforce is ignored: the Policy's spec.rolloutStrategy.type is Progressive, " +
		"and binding overrides apply only with All; the rollout alone decides where the Policy enforces"
	if got := o.String(); got != want {
		t.Errorf("String() = %q\nwant      %q", got, want)
	}
}
