package krm

import (
	"bytes"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// resultStrings are strings the YAML encoder writes in every style: plain,
// single- and double-quoted, literal, and those that would read as another type.
var resultStrings = []string{
	"plain message", "", "010", "0x1F", "1.5", "1e3", ".inf", "true", "yes", "Off", "y", "~", "null", "1:30", "-1:30:00.5",
	"2024-01-02", "- a list item", "key: value", "# comment", "trailing space ", " leading space", "'quoted'", `"double"`,
	"multi\nline", "multi\nline\n", "trailing line\n\n", " \n indented", "tab\there", "é ünïcödé", "\x00nul", "*alias", "&anchor",
	"!tag", "%directive", "@at", "`tick", "{flow}", "[list]", "a, b", "?", ":", "-", "<<", "=", "a # not a comment", "line\rbreak",
}

func TestResultNodeIsEncodersNode(t *testing.T) {
	for _, s := range resultStrings {
		sameResultAsEncoder(t, s, s, 3)
		sameResultAsEncoder(t, "message", s, 0)
	}
	results := fn.Results{
		{Message: "only a message"},
		{Message: "m", ResourceRef: &fn.ResourceRef{}, Field: &fn.Field{}, File: &fn.File{}},
		{Message: "m", Tags: map[string]string{"b10": "x", "b9": "yes", "a": ""}},
		{Message: "m", Field: &fn.Field{Path: "spec", CurrentValue: []any{1, "x"}, ProposedValue: map[string]any{"k": nil}}},
		{Message: "invalid \xff UTF-8", Severity: fn.Warning},
	}
	for _, r := range results {
		sameNodeText(t, r)
	}
}

func FuzzResultNode(f *testing.F) {
	for _, s := range resultStrings {
		f.Add(s, s, 1)
	}
	f.Fuzz(func(t *testing.T, message, value string, index int) {
		sameResultAsEncoder(t, message, value, index)
	})
}

// sameResultAsEncoder checks a result with message and value in every string
// field.
func sameResultAsEncoder(t *testing.T, message, value string, index int) {
	t.Helper()
	sameNodeText(t, &fn.Result{Message: message, Severity: fn.Severity(value),
		ResourceRef: &fn.ResourceRef{APIVersion: value, Kind: value, Name: value, Namespace: value},
		Field:       &fn.Field{Path: value}, File: &fn.File{Path: value, Index: index}})
}

// sameNodeText checks that resultNode writes r as the YAML encoder's own node of
// r does, in a list of results.
func sameNodeText(t *testing.T, r *fn.Result) {
	t.Helper()
	want := &yaml.Node{}
	if err := want.Encode(r); err != nil {
		t.Fatalf("encoding %+v: %v", r, err)
	}
	got, err := resultNode(r)
	if err != nil {
		t.Fatalf("resultNode(%+v): %v", r, err)
	}
	if g, w := resultsText(t, got), resultsText(t, want); g != w {
		t.Errorf("resultNode(%+v) writes\n%s\nthe encoder writes\n%s", r, g, w)
	}
}

func resultsText(t *testing.T, result *yaml.Node) string {
	t.Helper()
	var out bytes.Buffer
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{keyNode("results"), {Kind: yaml.SequenceNode, Content: []*yaml.Node{result}}}}
	if err := yaml.NewEncoder(&out).Encode(doc); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestFormatResult(t *testing.T) {
	cases := []struct {
		name   string
		result fn.Result
		want   string
	}{
		{"message only", fn.Result{Severity: fn.Error, Message: "m"}, "error: m"},
		{"no severity reads as info", fn.Result{Message: "m"}, "info: m"},
		{"cluster-scoped object with a field", fn.Result{Severity: fn.Warning, Message: "m",
			ResourceRef: &fn.ResourceRef{Kind: "Namespace", Name: "n"}, Field: &fn.Field{Path: "metadata.labels"}},
			"warning: Namespace n metadata.labels: m"},
		{"namespaced object in a file", fn.Result{Severity: fn.Error, Message: "m",
			ResourceRef: &fn.ResourceRef{Kind: "Policy", Namespace: "ns", Name: "p"}, File: &fn.File{Path: "p.yaml"}},
			"error: Policy ns/p (p.yaml): m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatResult(&tc.result); got != tc.want {
				t.Errorf("FormatResult = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestObjectResultWithoutObject(t *testing.T) {
	got := ObjectResult(nil, fn.Error, "spec", "m")
	if got.ResourceRef != nil || got.Field != nil || got.File != nil || got.Message != "m" || got.Severity != fn.Error {
		t.Errorf("ObjectResult(nil) = %+v, want a bare error result", got)
	}
}
