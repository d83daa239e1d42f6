package krm

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
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

// TestDecodeLocatesTheField checks that Decode names the field with its list
// indices also for the values a type decodes itself (durations,
// int-or-strings, times), which encoding/json reports without a field.
func TestDecodeLocatesTheField(t *testing.T) {
	cases := []struct {
		name, yaml, field, detail string
		into                      any
	}{
		{"duration", "apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rolloutStrategy:\n    progressive: {minSuccessTime: soon}\n",
			"spec.rolloutStrategy.progressive.minSuccessTime", `time: invalid duration "soon"`, &policyv1.Policy{}},
		{"int-or-string", "apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rolloutStrategy:\n    progressive: {maxConcurrency: true}\n",
			"spec.rolloutStrategy.progressive.maxConcurrency", "got a boolean, want a number", &policyv1.Policy{}},
		{"in a list", "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p}\nspec:\n  tolerations:\n  - {key: a}\n  - {key: b, tolerationSeconds: later}\n",
			"spec.tolerations[1].tolerationSeconds", "got a string, want a number", &clusterv1beta1.Placement{}},
		{"time", "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, creationTimestamp: yesterday}\n",
			"metadata.creationTimestamp", `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`, &clusterv1beta1.Placement{}},
		{"map key with dots", "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, labels: {a.b/c: [1]}}\n",
			"metadata.labels[a.b/c]", "got a list, want a string", &clusterv1beta1.Placement{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			item, err := fn.ParseKubeObject([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = Decode(item, tc.into)
			var fieldErr *field.Error
			if !errors.As(err, &fieldErr) {
				t.Fatalf("Decode error %v, want a field.Error", err)
			}
			if fieldErr.Field != tc.field || fieldErr.Detail != tc.detail {
				t.Errorf("Decode error names %s: %s, want %s: %s", fieldErr.Field, fieldErr.Detail, tc.field, tc.detail)
			}
		})
	}
}
