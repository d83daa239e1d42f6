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
