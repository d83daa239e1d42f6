package krm

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type testConfig struct {
	Names []string `json:"names,omitempty"`
	Limit int      `json:"limit,omitempty"`
}

func TestDecodeConfig(t *testing.T) {
	cases := []struct {
		name    string
		config  string // "" for no functionConfig
		want    testConfig
		wantErr string
	}{
		{name: "no config keeps the defaults", want: testConfig{Limit: 3}},
		{name: "kpt's placeholder keeps the defaults",
			config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n", want: testConfig{Limit: 3}},
		{name: "top-level fields", config: `apiVersion: fn.fleetpolicy.io/v1alpha1
kind: Test
metadata:
  name: t
  annotations:
    config.kubernetes.io/local-config: "true"
names: [a, b]
limit: 7
`, want: testConfig{Names: []string{"a", "b"}, Limit: 7}},
		{name: "unknown field", config: "apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\nname: [a]\n",
			wantErr: `functionConfig Test "t": name: unknown field`},
		{name: "wrong type", config: "apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\nlimit: many\n",
			wantErr: `functionConfig Test "t": limit: got a string, want a number`},
		{name: "wrong kind", config: "apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: Other\nmetadata:\n  name: t\n",
			wantErr: `functionConfig Other "t": apiVersion "fn.fleetpolicy.io/v1alpha1" and kind "Other" are not supported: want apiVersion fn.fleetpolicy.io/v1alpha1, kind Test`},
		{name: "a ConfigMap with data", config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  limit: \"2\"\n",
			wantErr: `functionConfig ConfigMap "c": apiVersion "v1" and kind "ConfigMap" are not supported: want apiVersion fn.fleetpolicy.io/v1alpha1, kind Test`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := fn.NewEmptyKubeObject()
			if tc.config != "" {
				var err error
				if config, err = fn.ParseKubeObject([]byte(tc.config)); err != nil {
					t.Fatal(err)
				}
			}
			got := testConfig{Limit: 3}
			err := DecodeConfig(config, "Test", &got)
			switch {
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("unexpected error: %v", err)
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("decoded %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeNamesTheField(t *testing.T) {
	obj, err := fn.ParseKubeObject([]byte("apiVersion: v1\nkind: Thing\nmetadata:\n  name: x\nspec:\n  items: {a: 1}\n  extra: ignored\n"))
	if err != nil {
		t.Fatal(err)
	}
	var into struct {
		Spec struct {
			Items []string `json:"items"`
		} `json:"spec"`
	}
	err = Decode(obj, &into)
	var fieldErr *field.Error
	if !errors.As(err, &fieldErr) || fieldErr.Field != "spec.items" || fieldErr.Detail != "got an object, want a list" {
		t.Errorf("Decode error = %v, want a field.Error for spec.items", err)
	}
	// Every function reports it in these words.
	if r := Unreadable(obj, err); r.Severity != fn.Error || r.Message != "cannot be read: got an object, want a list" ||
		r.Field == nil || r.Field.Path != "spec.items" {
		t.Errorf("Unreadable(decode error) = %+v", r)
	}
}
