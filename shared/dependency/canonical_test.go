package dependency

import (
	"reflect"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

func TestCanonicalize(t *testing.T) {
	sets := IndexPolicySets([]*policyv1beta1.PolicySet{
		policySet("default/base", "ns-setup", "operator"),
		policySet("infra/shared", "quota"),
		policySet("default/empty"),
		nil,
	})
	withNamespace := func(d policyv1.PolicyDependency, ns string) policyv1.PolicyDependency {
		d.Namespace = ns
		return d
	}
	cases := []struct {
		name string
		dep  policyv1.PolicyDependency
		want []policyv1.PolicyDependency
	}{
		{"policy defaults to the policy's namespace", onPolicy("a", policyv1.Compliant),
			[]policyv1.PolicyDependency{onPolicy("default.a", policyv1.Compliant)}},
		{"policy in another namespace", withNamespace(onPolicy("a", policyv1.NonCompliant), "infra"),
			[]policyv1.PolicyDependency{onPolicy("infra.a", policyv1.NonCompliant)}},
		{"a dotted policy name is already canonical", withNamespace(onPolicy("infra.a", policyv1.Compliant), "other"),
			[]policyv1.PolicyDependency{withNamespace(onPolicy("infra.a", policyv1.Compliant), "other")}},
		{"policy set expands to its members", onSet("base", policyv1.Compliant),
			[]policyv1.PolicyDependency{onPolicy("default.ns-setup", policyv1.Compliant), onPolicy("default.operator", policyv1.Compliant)}},
		{"policy set in another namespace", withNamespace(onSet("shared", policyv1.Pending), "infra"),
			[]policyv1.PolicyDependency{onPolicy("infra.quota", policyv1.Pending)}},
		{"unknown policy set is kept as written", onSet("missing", policyv1.Compliant),
			[]policyv1.PolicyDependency{onSet("missing", policyv1.Compliant)}},
		{"empty policy set waits for nothing", onSet("empty", policyv1.Compliant),
			[]policyv1.PolicyDependency{}},
		{"configuration policy is kept", onConfig("cfg", policyv1.Compliant),
			[]policyv1.PolicyDependency{onConfig("cfg", policyv1.Compliant)}},
		{"a Policy kind of another group is kept",
			policyv1.PolicyDependency{APIVersion: "example.com/v1", Kind: "Policy", Name: "a"},
			[]policyv1.PolicyDependency{{APIVersion: "example.com/v1", Kind: "Policy", Name: "a"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Canonicalize([]policyv1.PolicyDependency{tc.dep}, "default", sets)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Canonicalize(%+v) =\n %+v\nwant\n %+v", tc.dep, got, tc.want)
			}
		})
	}
}

func TestTargetOfAndObjectRef(t *testing.T) {
	cases := []struct {
		name string
		got  Ref
		want Ref
	}{
		{"configuration policy target loses its namespace",
			TargetOf(policyv1.PolicyDependency{APIVersion: policyAPI, Kind: "ConfigurationPolicy", Namespace: "x", Name: "cfg"}),
			configRef("cfg")},
		{"operator policy target loses its namespace",
			TargetOf(policyv1.PolicyDependency{APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: "OperatorPolicy", Namespace: "x", Name: "op"}),
			Ref{Group: "policy.open-cluster-management.io", Kind: "OperatorPolicy", Name: "op"}},
		{"other kinds keep their namespace",
			TargetOf(policyv1.PolicyDependency{APIVersion: "constraints.gatekeeper.sh/v1beta1", Kind: "K8sRequiredLabels", Namespace: "x", Name: "labels"}),
			Ref{Group: "constraints.gatekeeper.sh", Kind: "K8sRequiredLabels", Namespace: "x", Name: "labels"}},
		{"a policy object is named by its replicated name",
			ObjectRef(policyAPI, "Policy", "default", "a"), policyRef("default.a")},
		{"a policy object without namespace keeps its name",
			ObjectRef(policyAPI, "Policy", "", "a"), policyRef("a")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

func TestRefNames(t *testing.T) {
	cases := []struct {
		name                   string
		target                 Ref
		kind, namespace, local string
		from                   string
		want                   bool
	}{
		{"policy in the depending policy's namespace", policyRef("default.a"), "Policy", "", "a", "default", true},
		{"policy named with its namespace", policyRef("infra.a"), "Policy", "infra", "a", "default", true},
		{"policy named canonically", policyRef("infra.a"), "Policy", "", "infra.a", "default", true},
		{"policy of another namespace", policyRef("infra.a"), "Policy", "", "a", "default", false},
		{"configuration policy whatever the namespace", configRef("cfg"), "ConfigurationPolicy", "x", "cfg", "default", true},
		{"another kind", configRef("cfg"), "CertificatePolicy", "", "cfg", "default", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.target.Names(tc.kind, tc.namespace, tc.local, tc.from); got != tc.want {
				t.Errorf("%v.Names(%q, %q, %q, %q) = %v, want %v", tc.target, tc.kind, tc.namespace, tc.local, tc.from, got, tc.want)
			}
		})
	}
}
