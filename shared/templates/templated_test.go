package templates

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestIsTemplated(t *testing.T) {
	for _, tc := range []struct {
		s              string
		templated, hub bool
	}{
		{"", false, false},
		{"enforce", false, false},
		{"{ not: a template }", false, false},
		{"{{ .ManagedClusterName }}", true, false},
		{"{{- fromSecret \"ns\" \"s\" \"k\" -}}", true, false},
		{"https://{{hub fromConfigMap \"\" \"quay-config\" \"host\" hub}}", true, true},
		{"{{hub- .ManagedClusterName -hub}}", true, true},
		{"{{hub .A hub}} and {{ .B }}", true, true},
		{"{{ unterminated", true, false}, // still a template: the resolver reports the syntax
		{"$ocm_encrypted:abc", false, false},
	} {
		if got := IsTemplated(tc.s); got != tc.templated {
			t.Errorf("IsTemplated(%q) = %v, want %v", tc.s, got, tc.templated)
		}
		if got := IsHubTemplated(tc.s); got != tc.hub {
			t.Errorf("IsHubTemplated(%q) = %v, want %v", tc.s, got, tc.hub)
		}
	}
}

func TestTemplatedFields(t *testing.T) {
	for _, tc := range []struct {
		name, doc, path string
		want            []TemplatedField
	}{
		{name: "none", doc: `{"spec":{"remediationAction":"enforce","n":3,"b":true,"x":null}}`},
		{
			name: "a label value, a list position and a whole object",
			doc: `{"metadata":{"labels":{"app.kubernetes.io/env":"{{hub .ManagedClusterLabels.env hub}}","team":"a"}},
			       "spec":{"versions":["v1","{{ .X }}"],"subscription":{"config":"{{ \"{}\" | toLiteral }}"}}}`,
			want: []TemplatedField{
				{Path: "metadata.labels[app.kubernetes.io/env]", Hub: true},
				{Path: "spec.subscription.config"},
				{Path: "spec.versions[1]"},
			},
		},
		{
			name: "a templated key, and the value under it",
			doc:  `{"data":{"{{hub fromConfigMap \"\" \"c\" \"host\" hub}}":"{{ fromSecret \"a\" \"b\" \"c\" }}"}}`,
			want: []TemplatedField{
				{Path: `data.{{hub fromConfigMap "" "c" "host" hub}}`, Hub: true, Key: true},
				{Path: `data.{{hub fromConfigMap "" "c" "host" hub}}`},
			},
		},
		{
			name: "under a path",
			doc:  `{"spec":{"remediationAction":"{{hub if .X hub}}enforce{{hub end hub}}"}}`,
			path: "spec.policy-templates[2].objectDefinition",
			want: []TemplatedField{{Path: "spec.policy-templates[2].objectDefinition.spec.remediationAction", Hub: true}},
		},
		{name: "a templated root string", doc: `"{{ .X }}"`, path: "spec.config", want: []TemplatedField{{Path: "spec.config"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
				t.Fatal(err)
			}
			if got := TemplatedFields(v, tc.path); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TemplatedFields = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTemplatedFieldResolver(t *testing.T) {
	if got := (TemplatedField{Hub: true}).Resolver(); got != "the hub, for each cluster" {
		t.Errorf("hub: %q", got)
	}
	if got := (TemplatedField{}).Resolver(); got != "each managed cluster" {
		t.Errorf("managed: %q", got)
	}
}

func TestWithoutTemplated(t *testing.T) {
	var v any
	doc := `{"metadata":{"name":"op","labels":{"{{hub .K hub}}":"v","env":"{{ .E }}","team":"a"}},
	         "spec":{"versions":["v1","{{ .X }}","v2"],"subscription":{"name":"op","config":"{{ \"{}\" | toLiteral }}","n":3}}}`
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"name": "op", "labels": map[string]any{"team": "a"}},
		"spec": map[string]any{"versions": []any{"v1", "v2"},
			"subscription": map[string]any{"name": "op", "n": float64(3)}},
	}
	if got := WithoutTemplated(v); !reflect.DeepEqual(got, want) {
		t.Errorf("WithoutTemplated = %v, want %v", got, want)
	}
	if got := WithoutTemplated("{{ .X }}"); got != nil {
		t.Errorf("WithoutTemplated of a templated string = %v, want nil", got)
	}
	if s, _ := v.(map[string]any)["spec"].(map[string]any)["subscription"].(map[string]any)["config"].(string); s == "" {
		t.Error("WithoutTemplated changed its input")
	}
}

func TestTemplatedFieldUnder(t *testing.T) {
	f := TemplatedField{Path: "spec.subscription"}
	for path, want := range map[string]bool{
		"spec.subscription": true, "spec.subscription.name": true, "spec.subscription[x.y]": true,
		"spec.subscriptionX": false, "spec": false, "": false,
	} {
		if got := f.Under(path); got != want {
			t.Errorf("Under(%q) = %v, want %v", path, got, want)
		}
	}
}
