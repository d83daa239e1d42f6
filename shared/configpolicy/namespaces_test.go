package configpolicy

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestSelectNamespaces(t *testing.T) {
	namespaces := []Namespace{
		{Name: "default"},
		{Name: "kube-system", Labels: map[string]string{"tier": "system"}},
		{Name: "kube-public", Labels: map[string]string{"tier": "system"}},
		{Name: "app-prod", Labels: map[string]string{"env": "prod", "team": "a"}},
		{Name: "app-dev", Labels: map[string]string{"env": "dev", "team": "a"}},
		{Name: "web-prod", Labels: map[string]string{"env": "prod", "team": "b"}},
	}
	strs := func(s ...string) []policyv1.NonEmptyString {
		out := make([]policyv1.NonEmptyString, len(s))
		for i, v := range s {
			out[i] = policyv1.NonEmptyString(v)
		}
		return out
	}
	labels := func(m map[string]string) *map[string]string { return &m }
	exprs := func(e ...metav1.LabelSelectorRequirement) *[]metav1.LabelSelectorRequirement { return &e }
	cases := []struct {
		name    string
		sel     policyv1.Target
		want    []string
		wantErr string
	}{
		{name: "empty selector selects nothing", sel: policyv1.Target{}},
		{name: "exclude alone selects nothing", sel: policyv1.Target{Exclude: strs("kube-*")}},
		{name: "exact include", sel: policyv1.Target{Include: strs("default")}, want: []string{"default"}},
		{name: "include of a missing namespace", sel: policyv1.Target{Include: strs("nope")}},
		{name: "glob include, sorted", sel: policyv1.Target{Include: strs("*-prod")}, want: []string{"app-prod", "web-prod"}},
		{name: "include everything but excluded globs",
			sel:  policyv1.Target{Include: strs("*"), Exclude: strs("kube-*", "default")},
			want: []string{"app-dev", "app-prod", "web-prod"}},
		{name: "character class and ?", sel: policyv1.Target{Include: strs("app-[dp]??", "app-pro?")}, want: []string{"app-dev", "app-prod"}},
		{name: "overlapping includes list a namespace once", sel: policyv1.Target{Include: strs("app-*", "*-prod")},
			want: []string{"app-dev", "app-prod", "web-prod"}},
		{name: "matchLabels alone", sel: policyv1.Target{MatchLabels: labels(map[string]string{"env": "prod"})},
			want: []string{"app-prod", "web-prod"}},
		{name: "matchLabels and include are ANDed",
			sel:  policyv1.Target{Include: strs("app-*"), MatchLabels: labels(map[string]string{"env": "prod"})},
			want: []string{"app-prod"}},
		{name: "matchExpressions with exclude",
			sel: policyv1.Target{
				MatchExpressions: exprs(metav1.LabelSelectorRequirement{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}),
				Exclude:          strs("app-dev"),
			},
			want: []string{"app-prod", "web-prod"}},
		{name: "DoesNotExist expression", sel: policyv1.Target{
			MatchExpressions: exprs(metav1.LabelSelectorRequirement{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}),
			Exclude:          strs("app-*")},
			want: []string{"default", "web-prod"}},
		{name: "empty matchLabels selects every namespace", sel: policyv1.Target{MatchLabels: labels(map[string]string{})},
			want: []string{"app-dev", "app-prod", "default", "kube-public", "kube-system", "web-prod"}},
		{name: "malformed include pattern", sel: policyv1.Target{Include: strs("ok", "[")},
			wantErr: `spec.namespaceSelector.include[1]: Invalid value: "[": malformed pattern`},
		{name: "malformed exclude pattern, even when include would not match", sel: policyv1.Target{Include: strs("zzz"), Exclude: strs("a[")},
			wantErr: `spec.namespaceSelector.exclude[0]: Invalid value: "a[": malformed pattern`},
		{name: "invalid expression operator", sel: policyv1.Target{
			MatchExpressions: exprs(metav1.LabelSelectorRequirement{Key: "env", Operator: "Near", Values: []string{"x"}})},
			wantErr: `spec.namespaceSelector: Invalid value: "Near" is not a valid label selector operator`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SelectNamespaces(tc.sel, namespaces, field.NewPath("spec", "namespaceSelector"))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTerminatingInclusion: a namespace being deleted is selected like any
// other unless terminatingInclusion is Never (Default is OCM's controller
// default, IfMatch).
func TestTerminatingInclusion(t *testing.T) {
	namespaces := []Namespace{{Name: "app-prod"}, {Name: "old-prod", Terminating: true}}
	for inclusion, want := range map[string][]string{
		"":        {"app-prod", "old-prod"},
		"Default": {"app-prod", "old-prod"},
		"IfMatch": {"app-prod", "old-prod"},
		"Never":   {"app-prod"},
	} {
		sel := policyv1.Target{Include: []policyv1.NonEmptyString{"*-prod"}, TerminatingInclusion: inclusion}
		got, err := SelectNamespaces(sel, namespaces, field.NewPath("spec", "namespaceSelector"))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("terminatingInclusion %q: %v %v, want %v", inclusion, got, err, want)
		}
	}
}

// TestNoNamespaceMessage: OCM's words for a namespaced object template left
// without a namespace, with and without a name.
func TestNoNamespaceMessage(t *testing.T) {
	for _, tc := range []struct {
		name, kind     string
		afterTemplates bool
		want           string
	}{
		{"", "ConfigMap", false,
			"namespaced object of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata"},
		{"settings", "ConfigMap", false,
			"namespaced object settings of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata"},
		{"", "Role", true, "namespaced object of kind Role has no namespace specified after template resolution"},
		{"reader", "Role", true, "namespaced object reader of kind Role has no namespace specified after template resolution"},
	} {
		if got := NoNamespaceMessage(tc.name, tc.kind, tc.afterTemplates); got != tc.want {
			t.Errorf("NoNamespaceMessage(%q, %q, %v) = %q, want %q", tc.name, tc.kind, tc.afterTemplates, got, tc.want)
		}
	}
}
