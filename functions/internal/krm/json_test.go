package krm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// yamlValues are objects whose YAML values resolve in every way YAML lets them:
// the JSON of an object must be the one kyaml's RNode.MarshalJSON gives.
var yamlValues = map[string]string{
	"scalars": `apiVersion: v1
kind: ConfigMap
metadata:
  name: a # comment
  labels: {n: "1", b: "true"}
data:
  int: 010
  hex: 0x1F
  big: 123456789012345678901234567890
  float: 1.5e3
  bool: yes
  on: on
  null: ~
  empty:
  time: 2024-01-02T03:04:05Z
  date: 2024-01-02
  quoted: '42'
  literal: |
    text
  folded: >-
    one
    two
  binary: !!binary aGVsbG8=
  tagged: !!str 12
`,
	"anchors, aliases and merge keys": `apiVersion: v1
kind: Thing
base: &base
  a: 1
  b: [x, y]
copy: *base
merged:
  <<: *base
  c: 3
list:
- &item {k: v}
- *item
`,
	"a duplicate key":            "apiVersion: v1\nkind: Thing\nspec:\n  a: 1\n  a: 2\n",
	"a key that is not a string": "apiVersion: v1\nkind: Thing\nspec:\n  1: one\n  [a]: list\n",
	"a float JSON cannot hold":   "apiVersion: v1\nkind: Thing\nspec:\n  inf: .inf\n",
}

// lineNumbers are what an error message says about where in the YAML text it
// is; kyaml's text is the object written out again, so they differ.
var lineNumbers = regexp.MustCompile(`line \d+`)

func TestMarshalJSONIsKyamls(t *testing.T) {
	for name, object := range yamlValues {
		t.Run(name, func(t *testing.T) {
			sameJSONAsKyaml(t, []byte(object))
		})
	}
}

func FuzzMarshalJSON(f *testing.F) {
	for _, object := range yamlValues {
		f.Add([]byte(object))
	}
	f.Fuzz(func(t *testing.T, object []byte) {
		sameJSONAsKyaml(t, object)
	})
}

// sameJSONAsKyaml checks that MarshalJSON gives what kyaml's RNode.MarshalJSON
// gives, but where kyaml is wrong: an empty value where YAML text cannot leave
// it empty (in a flow collection, {a: }, as a key, or with an anchor) it writes
// out as ” and reads back as a string, where YAML, like the API server, reads
// null.
func sameJSONAsKyaml(t *testing.T, object []byte) {
	t.Helper()
	obj, err := fn.ParseKubeObject(object)
	if err != nil || hasQuotedEmptyNull(obj.CopyToResourceNode().YNode(), false, false) {
		return
	}
	want, wantErr := obj.CopyToResourceNode().MarshalJSON()
	got, err := MarshalJSON(obj)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("MarshalJSON error %v, kyaml's %v", err, wantErr)
	case err != nil:
		if g, w := lineNumbers.ReplaceAllString(err.Error(), "line N"), lineNumbers.ReplaceAllString(wantErr.Error(), "line N"); g != w {
			t.Errorf("MarshalJSON error\n %s\nkyaml's\n %s", g, w)
		}
	case string(got) != string(want):
		t.Errorf("MarshalJSON\n %s\nkyaml's\n %s", got, want)
	}
}

// hasQuotedEmptyNull reports whether n holds an empty null that kyaml writes
// out as ”.
func hasQuotedEmptyNull(n *yaml.Node, inFlow, isKey bool) bool {
	if n.Kind == yaml.ScalarNode && n.Value == "" && n.Tag == "!!null" && (inFlow || isKey || n.Anchor != "") {
		return true
	}
	inFlow = inFlow || n.Style&yaml.FlowStyle != 0
	for i, c := range n.Content {
		if hasQuotedEmptyNull(c, inFlow, n.Kind == yaml.MappingNode && i%2 == 0) {
			return true
		}
	}
	return false
}

func TestMarshalJSONReadsEmptyValuesAsNull(t *testing.T) {
	obj, err := fn.ParseKubeObject([]byte("apiVersion: v1\nkind: Thing\nspec: {a: , b: [x, ]}\nanchored: &empty\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := MarshalJSON(obj)
	if want := `{"anchored":null,"apiVersion":"v1","kind":"Thing","spec":{"a":null,"b":["x"]}}`; err != nil || string(got) != want {
		t.Errorf("MarshalJSON = %s, %v; want %s", got, err, want)
	}
}

// jsonValues are JSON texts of every kind of value, numbers in every spelling.
var jsonValues = []string{
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"n":"1","b":"true","e":""}}}`,
	`{"ints":[0,-0,7,-12,9223372036854775807,18446744073709551615,123456789012345678901234567890],` +
		`"floats":[1.5,-0.25,1e3,1E-3,2.5e+10,1e400],"bools":[true,false],"null":null,"empty":{},"none":[]}`,
	`{"strings":["010","yes","~","null","1e3","- x","a: b","#","multi\nline","tab\t","\u00e9\u0000","\/"],"<<":"merge"}`,
	`[{"nested":[[1],[{"k":"v"}]]}]`,
	`"scalar"`,
}

func TestNodeFromJSONIsParsedJSONInBlockStyle(t *testing.T) {
	for _, raw := range jsonValues {
		sameNodeAsParsed(t, []byte(raw))
	}
}

func FuzzNodeFromJSON(f *testing.F) {
	for _, raw := range jsonValues {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameNodeAsParsed(t, raw)
	})
}

// sameNodeAsParsed checks that NodeFromJSON makes of raw the node yaml.Parse
// makes of it, in block style.
func sameNodeAsParsed(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		if _, err := NodeFromJSON(raw); err == nil {
			t.Fatalf("NodeFromJSON(%q) accepted JSON that is not valid", raw)
		}
		return
	}
	parsed, err := yaml.Parse(string(raw))
	if err != nil {
		return // JSON that YAML cannot read (control characters)
	}
	want := parsed.YNode()
	blockStyle(want)
	got, err := NodeFromJSON(raw)
	if err != nil {
		t.Fatalf("NodeFromJSON(%q): %v", raw, err)
	}
	if diff := nodeDifference(got, want, "$"); diff != "" {
		t.Errorf("NodeFromJSON(%s): %s", raw, diff)
	}
}

func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

func nodeDifference(got, want *yaml.Node, path string) string {
	if got.Kind != want.Kind || got.Tag != want.Tag || got.Value != want.Value || got.Style != want.Style ||
		len(got.Content) != len(want.Content) {
		return fmt.Sprintf("at %s: got kind %v tag %s value %q style %v and %d children, want kind %v tag %s value %q style %v and %d children",
			path, got.Kind, got.Tag, got.Value, got.Style, len(got.Content), want.Kind, want.Tag, want.Value, want.Style, len(want.Content))
	}
	for i := range got.Content {
		if diff := nodeDifference(got.Content[i], want.Content[i], fmt.Sprintf("%s[%d]", path, i)); diff != "" {
			return diff
		}
	}
	return ""
}
