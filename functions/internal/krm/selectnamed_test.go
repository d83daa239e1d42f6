package krm

import (
	"slices"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestSelectNamed(t *testing.T) {
	items := []string{"a/p", "b/p", "a/q"}
	key := func(s string) (string, string) { return s[:1], s[2:] }
	cases := []struct {
		names   []string
		want    []string
		wantErr string
	}{
		{names: []string{"p"}, want: []string{"a/p", "b/p"}},
		{names: []string{"b/p", "q"}, want: []string{"b/p", "a/q"}},
		{names: []string{"q", "a/q"}, want: []string{"a/q"}},
		{names: []string{"p", "c/p", "r"}, want: []string{"a/p", "b/p"},
			wantErr: `functionConfig: policies[1]: no Policy "c/p" in the input; policies[2]: no Policy "r" in the input`},
	}
	for _, c := range cases {
		got, errs := SelectNamed(items, key, field.NewPath("policies"), c.names)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: selected %v, want %v", c.names, got, c.want)
		}
		if gotErr := errString(ConfigError(nil, errs)); gotErr != c.wantErr {
			t.Errorf("%v: error %q, want %q", c.names, gotErr, c.wantErr)
		}
	}
}

func TestCheckObjectNames(t *testing.T) {
	errs := CheckObjectNames(field.NewPath("policies"), []string{"p", "ns/p", "", "/p", "ns/", "a/b/c"})
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	if want := []string{"policies[2]", "policies[3]", "policies[4]", "policies[5]"}; !slices.Equal(got, want) {
		t.Errorf("CheckObjectNames refuses %v, want %v", got, want)
	}
}

// TestConfigError checks the one way every function reports the fields of
// its functionConfig: the config named once, then each field and its detail.
func TestConfigError(t *testing.T) {
	config, err := fn.ParseKubeObject([]byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\n"))
	if err != nil {
		t.Fatal(err)
	}
	root := field.NewPath("placement")
	cases := []struct {
		name string
		errs field.ErrorList
		want string
	}{
		{"none", nil, ""},
		{"one", field.ErrorList{field.Invalid(root.Child("name"), "A", "must be lower case")},
			`functionConfig Test "t": placement.name: must be lower case`},
		{"each in turn", field.ErrorList{field.Required(root.Child("name"), "is required"), field.Forbidden(field.NewPath("mode"), "is only used in mode policy")},
			`functionConfig Test "t": placement.name: is required; mode: is only used in mode policy`},
		{"no detail: the error's body", field.ErrorList{field.Required(root.Child("name"), "")},
			`functionConfig Test "t": placement.name: Required value`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errString(ConfigError(config, tc.errs)); got != tc.want {
				t.Errorf("ConfigError = %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
