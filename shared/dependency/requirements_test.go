package dependency

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

func TestRequirements(t *testing.T) {
	p := policy("app",
		[]policyv1.PolicyDependency{onPolicy("setup", policyv1.Compliant), onSet("base", policyv1.Compliant)},
		config("first", onConfig("bar", policyv1.NonCompliant), onPolicy("default.setup", policyv1.Compliant)),
		config("second", onPolicy("setup", policyv1.NonCompliant)),
		nil,
	)
	sets := IndexPolicySets([]*policyv1beta1.PolicySet{policySet("base", "ns-setup")})
	policyLevel := []Requirement{
		{Target: policyRef("default.setup"), Compliance: policyv1.Compliant, Field: dependencyField(0)},
		{Target: policyRef("default.ns-setup"), Compliance: policyv1.Compliant, Field: dependencyField(1)},
	}
	cases := []struct {
		name       string
		template   int
		want       []Requirement
		wantIssues []string
	}{
		{"union of policy and template dependencies, without duplicates", 0,
			append(policyLevel, Requirement{Target: configRef("bar"), Compliance: policyv1.NonCompliant,
				Field: extraDependencyField(0, 0)}),
			nil},
		{"a conflicting template dependency loses to the policy's", 1, policyLevel,
			[]string{`Policy default/app: spec.policy-templates[1].extraDependencies[0].compliance: Invalid value: "NonCompliant": ` +
				"dependency on Policy default.setup is declared with compliance Compliant at spec.dependencies[0], which applies"}},
		{"a null template has the policy's dependencies", 2, policyLevel, nil},
		{"a template out of range has the policy's dependencies", 7, policyLevel, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, issues := Requirements(p, tc.template, sets)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("requirements:\n got  %+v\n want %+v", got, tc.want)
			}
			if got := issueStrings(issues); !reflect.DeepEqual(got, tc.wantIssues) {
				t.Errorf("issues:\n got  %q\n want %q", got, tc.wantIssues)
			}
		})
	}
	if got, issues := Requirements(nil, 0, nil); got != nil || issues != nil {
		t.Errorf("Requirements(nil) = %v, %v; want nothing", got, issues)
	}
}

func TestValidate(t *testing.T) {
	key := types.NamespacedName{Namespace: "default", Name: "p"}
	cases := []struct {
		name string
		dep  policyv1.PolicyDependency
		want []string
	}{
		{"valid", onPolicy("a", policyv1.Compliant), nil},
		{"pending is a valid state", onPolicy("a", policyv1.Pending), nil},
		{"invalid compliance", onPolicy("a", "compliant"), []string{
			`Policy default/p: spec.dependencies[0].compliance: Unsupported value: "compliant": supported values: "Compliant", "NonCompliant", "Pending"`}},
		{"missing compliance", onPolicy("a", ""), []string{
			`Policy default/p: spec.dependencies[0].compliance: Unsupported value: "": supported values: "Compliant", "NonCompliant", "Pending"`}},
		{"missing apiVersion, kind and name", policyv1.PolicyDependency{Compliance: policyv1.Compliant}, []string{
			"Policy default/p: spec.dependencies[0].apiVersion: Required value: it may be left out only for Policy, PolicySet, ConfigurationPolicy, CertificatePolicy, OperatorPolicy",
			"Policy default/p: spec.dependencies[0].kind: Required value",
			"Policy default/p: spec.dependencies[0].name: Required value",
		}},
		{"namespace on a ConfigurationPolicy", policyv1.PolicyDependency{APIVersion: policyAPI, Kind: "ConfigurationPolicy",
			Namespace: "x", Name: "c", Compliance: policyv1.Compliant}, []string{
			`Policy default/p: spec.dependencies[0].namespace: Invalid value: "x": must be empty for a ConfigurationPolicy dependency: the managed cluster looks it up in its own namespace`}},
		{"namespace on a CertificatePolicy", policyv1.PolicyDependency{APIVersion: policyAPI, Kind: "CertificatePolicy",
			Namespace: "x", Name: "c", Compliance: policyv1.Compliant}, []string{
			`Policy default/p: spec.dependencies[0].namespace: Invalid value: "x": must be empty for a CertificatePolicy dependency: the managed cluster looks it up in its own namespace`}},
		{"namespace on a Policy is fine", policyv1.PolicyDependency{APIVersion: policyAPI, Kind: "Policy",
			Namespace: "x", Name: "c", Compliance: policyv1.Compliant}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := issueStrings(Validate(policy("p", []policyv1.PolicyDependency{tc.dep})))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Validate:\n got  %+v\n want %+v", got, tc.want)
			}
		})
	}
	t.Run("template dependencies are checked with their path", func(t *testing.T) {
		got := Validate(policy("p", nil, config("a"), config("b", onPolicy("x", policyv1.Compliant), onPolicy("", policyv1.Compliant))))
		if len(got) != 1 || got[0].Policy != key || got[0].Problem.Field != "spec.policy-templates[1].extraDependencies[1].name" || got[0].Problem.Type != field.ErrorTypeRequired {
			t.Errorf("Validate:\n got  %q\n want the name of extraDependencies[1] of template 1 required", issueStrings(got))
		}
	})
}

// TestIssueNamesItsPolicy checks that an Issue, however it is printed,
// names the policy that holds the field.
func TestIssueNamesItsPolicy(t *testing.T) {
	is := Issue{Policy: types.NamespacedName{Namespace: "ns", Name: "p"}, Problem: field.Required(dependencyField(0).Child("kind"), "")}
	const want = "Policy ns/p: spec.dependencies[0].kind: Required value"
	for _, tc := range []struct {
		name, got, want string
	}{
		{"Error", is.Error(), want},
		{"String", is.String(), want},
		{"%v", fmt.Sprintf("%v", is), want},
		{"%s", fmt.Sprintf("%s", is), want},
		{"%q", fmt.Sprintf("%q", is), strconv.Quote(want)},
		{"%v of a list", fmt.Sprintf("%v", []Issue{is, is}), "[" + want + " " + want + "]"},
		{"wrapped with %v", fmt.Errorf("checking: %v", is).Error(), "checking: " + want},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// issueStrings are issues as their String renders them; nil for none.
func issueStrings(issues []Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.String())
	}
	return out
}

// TestDependencyWithoutAPIVersion reads dependencies on the policy group's
// kinds written without apiVersion (a spelling fleetpolicy accepts) exactly
// like the OCM spelling, and still refuses an apiVersion-less dependency on
// another kind.
func TestDependencyWithoutAPIVersion(t *testing.T) {
	withoutAPIVersion := func(dep policyv1.PolicyDependency) policyv1.PolicyDependency {
		dep.APIVersion = ""
		return dep
	}
	ocm := policy("app",
		[]policyv1.PolicyDependency{onPolicy("setup", policyv1.Compliant), onSet("base", policyv1.Compliant)},
		config("first", onConfig("bar", policyv1.NonCompliant)))
	kindOnly := policy("app",
		[]policyv1.PolicyDependency{withoutAPIVersion(onPolicy("setup", policyv1.Compliant)), withoutAPIVersion(onSet("base", policyv1.Compliant))},
		config("first", withoutAPIVersion(onConfig("bar", policyv1.NonCompliant))))
	sets := IndexPolicySets([]*policyv1beta1.PolicySet{policySet("base", "ns-setup")})
	want, _ := Requirements(ocm, 0, sets)
	got, issues := Requirements(kindOnly, 0, sets)
	if len(want) != 3 || !reflect.DeepEqual(got, want) || issues != nil {
		t.Errorf("without apiVersion:\n got  %+v %v\n want %+v", got, issues, want)
	}
	if issues := Validate(kindOnly); issues != nil {
		t.Errorf("Validate refuses dependencies without apiVersion: %v", issues)
	}
	other := policy("app", []policyv1.PolicyDependency{{Kind: "ConfigMap", Name: "cm", Compliance: policyv1.Compliant}})
	if got, _ := Requirements(other, 0, nil); got != nil {
		t.Errorf("a ConfigMap without apiVersion became a requirement: %+v", got)
	}
	if issues := Validate(other); len(issues) != 1 || issues[0].Problem.Field != "spec.dependencies[0].apiVersion" {
		t.Errorf("Validate of a ConfigMap without apiVersion: %v", issues)
	}
}
