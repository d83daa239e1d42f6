package v1beta1

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestExtraKeysRoundTrip: keys the types lack are kept in Extra when decoded
// and written back when encoded; typed fields are decoded as before.
func TestExtraKeysRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantExtra map[string]runtime.RawExtension
		check     func(*OperatorPolicySpec) bool
	}{
		{"no extra keys",
			`{"remediationAction":"inform","removalBehavior":{},"subscription":{"name":"op","channel":"stable"},"operatorGroup":{"name":"og","targetNamespaces":["a"]}}`,
			nil, func(s *OperatorPolicySpec) bool {
				return s.Subscription.Channel == "stable" && string(s.OperatorGroup.TargetNamespaces.Raw) == `["a"]`
			}},
		{"unknown subscription key",
			`{"remediationAction":"inform","removalBehavior":{},"subscription":{"name":"op","chanel":"fast"}}`,
			map[string]runtime.RawExtension{"chanel": {Raw: []byte(`"fast"`)}}, func(s *OperatorPolicySpec) bool { return s.Subscription.Channel == "" }},
		{"OLM's OperatorGroup fields",
			`{"remediationAction":"inform","removalBehavior":{},"subscription":{"name":"op"},"operatorGroup":{"name":"og","upgradeStrategy":"Default","staticProvidedAPIs":true}}`,
			map[string]runtime.RawExtension{"upgradeStrategy": {Raw: []byte(`"Default"`)}, "staticProvidedAPIs": {Raw: []byte(`true`)}},
			func(s *OperatorPolicySpec) bool { return s.OperatorGroup.Name == "og" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &OperatorPolicySpec{}
			if err := json.Unmarshal([]byte(tc.in), spec); err != nil {
				t.Fatal(err)
			}
			extra := spec.Subscription.Extra
			if spec.OperatorGroup != nil && spec.OperatorGroup.Extra != nil {
				extra = spec.OperatorGroup.Extra
			}
			if !reflect.DeepEqual(extra, tc.wantExtra) {
				t.Errorf("extra %v, want %v", extra, tc.wantExtra)
			}
			if !tc.check(spec) {
				t.Errorf("typed fields decoded wrong: %+v", spec)
			}
			out, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.in), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\n got %s\nwant %s", out, tc.in)
			}
			if copied := spec.DeepCopy(); !reflect.DeepEqual(copied, spec) {
				t.Errorf("DeepCopy lost something: %+v", copied)
			}
		})
	}
}
