package krm

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// plainYAMLCases are documents in every spelling of the values of plain YAML,
// and next to it; plain says whether marshalJSON writes the document straight
// from its nodes.
var plainYAMLCases = []struct {
	name  string
	yaml  string
	plain bool
}{
	{name: "a Policy", plain: true, yaml: `apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: p # comment
  namespace: policies
  annotations: {policy.open-cluster-management.io/standards: "NIST SP 800-53", b: "true"}
spec:
  disabled: false
  remediationAction: inform
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: cp}
      spec:
        severity: low
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: prod}}
`},
	{name: "a list", plain: true, yaml: "- a\n- {b: 1}\n- [c]\n- []\n- {}\n"},
	{name: "keys to sort", plain: true, yaml: "b: 1\na: 2\nB: 3\n\"\": 4\nab: 5\n\"a\\0\": 6\né: 7\n\"\\U0001F600\": 8\n"},
	{name: "null and booleans in every spelling", plain: true,
		yaml: "n: [null, Null, NULL, ~, !!null null, !!null '']\ne:\nb: [true, True, TRUE, false, False, FALSE, !!bool true]\n" +
			"s: [yes, no, on, off, y, N, nil, None, tRUE]\n"},
	{name: "decimal integers", plain: true,
		yaml: "i: [0, -0, 7, -12, 9007199254740993, 9223372036854775807, -9223372036854775808, 9223372036854775808, " +
			"18446744073709551615, 18446744073709551616, -9223372036854775809, 123456789012345678901234567890, 1" +
			strings.Repeat("0", 400) + "]\n"},
	{name: "decimal floats", plain: true,
		yaml: "f: [1.5, -0.25, 1e3, 1E-3, .5, -.5, 5., 5.e3, 2.5e+10, -1e-400, 1e400, 0.1e1, -0.0, 1e21, 1e20, 1e-6, 1e-7, 123456789.125]\n"},
	{name: "numbers in other spellings", yaml: "i: [010, 0o17, 0x1F, 1_000, 0b101, +5, -0b11, +1.5]\n"},
	{name: "explicit tags that fit", plain: true,
		yaml: "a: !!str 12\nb: !!int \"12\"\nc: !!float 12\nd: !!float -0\ne: !!float 18446744073709551616\nf: !!str\n" +
			"g: !!int -0\nh: !!float \"1.5\"\ni: !!bool \"true\"\nj: !!int 18446744073709551615\nk: !!float 1e20\n"},
	{name: "!!int too big for a uint64", yaml: "a: !!int 18446744073709551616\n"},
	{name: "!!float in a uint64's range only", yaml: "a: !!float 18446744073709551615\n"},
	{name: "!!float too big", yaml: "a: !!float 1e400\n"},
	{name: "!!null that is not", yaml: "a: !!null x\n"},
	{name: "!!bool that is not", yaml: "a: !!bool yes\n"},
	{name: "!!int that is not", yaml: "a: !!int 1.5\n"},
	{name: "a custom tag", yaml: "a: !custom text\n"},
	{name: "the non-specific tag, which YAML resolves", plain: true, yaml: "a: ! 12\n"},
	{name: "a custom tag on a mapping", plain: true, yaml: "a: !custom {b: 1}\nc: !!map [d]\n"},
	{name: "timestamps", yaml: "t: 2024-01-02T03:04:05Z\n"},
	{name: "binary", yaml: "b: !!binary aGVsbG8=\n"},
	{name: "infinity", yaml: "f: .inf\n"},
	{name: "anchors and aliases", yaml: "a: &a {k: v}\nb: *a\n"},
	{name: "an anchor without an alias", plain: true, yaml: "a: &a {k: v}\n"},
	{name: "merge keys", yaml: "a: &a {k: v}\nb: {<<: *a, l: w}\n"},
	{name: "a quoted <<", yaml: "m: {\"<<\": x}\n"},
	{name: "a duplicate key", yaml: "a: 1\na: 2\n"},
	{name: "a duplicate key inside", yaml: "s: {b: 1, a: 1, b: 2}\n"},
	{name: "a key that is not a string", yaml: "s: {1: one}\n"},
	{name: "keys that are not strings, at the top", yaml: "1: one\ntrue: yes\n~: dropped\n"},
	{name: "strings JSON escapes", plain: true,
		yaml: "s: \"é \\u2028 \\u2029 <&> \\t \\n \\r \\b \\f \\0 \\x1f \\x7f \\\" \\\\ / \\u00a0 \\U0001F600\"\n" +
			"k: {\"<a&b>\": \"\\x01\"}\nl: |\n  two\n  lines\n"},
}

func TestMarshalJSONIsDecodedJSON(t *testing.T) {
	for _, tc := range plainYAMLCases {
		t.Run(tc.name, func(t *testing.T) {
			node := parseYAML(t, tc.yaml)
			sameMarshalJSONAsDecoded(t, node)
			if plain := (&plainJSONWriter{}).value(node); plain != tc.plain {
				t.Errorf("written straight from the nodes: %v, want %v", plain, tc.plain)
			}
		})
	}
}

// TestMarshalJSONOfBuiltNodes covers nodes that no YAML text parses to but
// code builds: scalars without a tag, as kyaml's setters make them, and
// strings of invalid UTF-8.
func TestMarshalJSONOfBuiltNodes(t *testing.T) {
	scalar := func(tag, value string, style yaml.Style) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Style: style}
	}
	for name, value := range map[string]*yaml.Node{
		"untagged scalars": {Kind: yaml.SequenceNode, Content: []*yaml.Node{
			scalar("", "12", 0), scalar("", "12", yaml.DoubleQuotedStyle), scalar("", "1.5", 0), scalar("", "true", 0),
			scalar("", "~", 0), scalar("", "", 0), scalar("", "text", 0), scalar("", "18446744073709551615", 0),
			scalar("", "0x1F", 0), scalar("", "-0", 0), scalar("", "2024-01-02", yaml.SingleQuotedStyle),
		}},
		"invalid UTF-8 in a string": {Kind: yaml.SequenceNode, Content: []*yaml.Node{
			scalar("!!str", "a\xffb", 0), scalar("!!str", "é\xc3", 0),
		}},
		"invalid UTF-8 in a key": {Kind: yaml.MappingNode, Content: []*yaml.Node{
			scalar("!!str", "\xff", 0), scalar("!!str", "v", 0),
		}},
		"a key that is a list": {Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.SequenceNode}, scalar("!!str", "v", 0),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			sameMarshalJSONAsDecoded(t, value)
		})
	}
}

// TestMarshalJSONOfExamplesAndGoldenInputs checks every mapping and list in
// the examples and the functions' test data, and that the objects of the
// policy API are written straight from their nodes.
func TestMarshalJSONOfExamplesAndGoldenInputs(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../*/testdata/*.yaml", "../../*/testdata/*/*.yaml", "../../*/testdata/*/*/*.yaml",
		"../../../examples/*.yaml", "../../../examples/*/*.yaml", "../../../examples/*/*/*.yaml"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	if len(files) < 50 {
		t.Fatalf("found %d YAML files of examples and test data, want more", len(files))
	}
	var trees, policies int
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(text))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Logf("%s: %v", file, err) // test data of bad input
				break
			}
			trees += sameMarshalJSONOfEveryTree(t, file, doc.Content[0])
		}
		objects, err := fn.ParseKubeObjects(text)
		if err != nil {
			continue
		}
		for _, obj := range objects {
			node := Node(obj)
			trees += sameMarshalJSONOfEveryTree(t, file, node)
			if strings.HasPrefix(obj.GetAPIVersion(), "policy.open-cluster-management.io/") {
				policies++
				if !(&plainJSONWriter{}).value(node) {
					t.Errorf("%s: %s %s is not written straight from its nodes", file, obj.GetKind(), obj.GetName())
				}
			}
		}
	}
	if policies == 0 {
		t.Error("found no object of the policy API")
	}
	t.Logf("%d files, %d mappings and lists, %d objects of the policy API", len(files), trees, policies)
}

// sameMarshalJSONOfEveryTree checks marshalJSON of n and of every mapping
// and list under it, and returns how many it checked.
func sameMarshalJSONOfEveryTree(t *testing.T, file string, n *yaml.Node) int {
	t.Helper()
	checked := 0
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		got, err := marshalJSON(n)
		want, wantErr := decodedJSON(n)
		if !sameJSONResult(got, err, want, wantErr) {
			t.Errorf("%s, line %d: marshalJSON\n %s, %v\nYAML's decoding\n %s, %v", file, n.Line, got, err, want, wantErr)
		}
		checked++
	}
	for _, c := range n.Content {
		checked += sameMarshalJSONOfEveryTree(t, file, c)
	}
	return checked
}

func FuzzMarshalJSONPlain(f *testing.F) {
	for _, tc := range plainYAMLCases {
		f.Add([]byte(tc.yaml))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		var doc yaml.Node
		if err := yaml.Unmarshal(text, &doc); err != nil || len(doc.Content) == 0 {
			return
		}
		sameMarshalJSONOfEveryTree(t, "fuzz input", doc.Content[0])
	})
}

// sameMarshalJSONAsDecoded checks that marshalJSON gives of node what YAML's
// decoding and json.Marshal give, the error included.
func sameMarshalJSONAsDecoded(t *testing.T, node *yaml.Node) {
	t.Helper()
	got, err := marshalJSON(node)
	want, wantErr := decodedJSON(node)
	if !sameJSONResult(got, err, want, wantErr) {
		t.Errorf("marshalJSON\n %s, %v\nYAML's decoding\n %s, %v", got, err, want, wantErr)
	}
}

func sameJSONResult(got []byte, err error, want []byte, wantErr error) bool {
	if err != nil || wantErr != nil {
		return err != nil && wantErr != nil && err.Error() == wantErr.Error()
	}
	return bytes.Equal(got, want)
}

func parseYAML(t testing.TB, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("parsing %q: %v", text, err)
	}
	return doc.Content[0]
}

// BenchmarkMarshalJSON compares marshalJSON with YAML's decoding and
// json.Marshal it replaces, on objects like the ones the functions decode by
// the thousand.
func BenchmarkMarshalJSON(b *testing.B) {
	objects := map[string]string{"Policy": plainYAMLCases[0].yaml, "OperatorPolicy": `apiVersion: policy.open-cluster-management.io/v1beta1
kind: OperatorPolicy
metadata:
  name: strimzi
  namespace: policies
spec:
  remediationAction: enforce
  severity: medium
  operatorGroup:
    name: strimzi
    namespace: strimzi
    target:
      namespaces:
      - strimzi
  subscription:
    channel: stable
    name: strimzi-kafka-operator
    namespace: strimzi
    installPlanApproval: Automatic
    source: operatorhubio-catalog
    sourceNamespace: olm
  allowedCSVs:
  - "*"
`}
	for kind, text := range objects {
		node := parseYAML(b, text)
		for name, marshal := range map[string]func(*yaml.Node) ([]byte, error){
			"marshalJSON": marshalJSON, "decoded": decodedJSON,
		} {
			b.Run(kind+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := marshal(node); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

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
	"a duplicate key":                        "apiVersion: v1\nkind: Thing\nspec:\n  a: 1\n  a: 2\n",
	"a key that is not a string":             "apiVersion: v1\nkind: Thing\nspec:\n  1: one\n  [a]: list\n",
	"a float JSON cannot hold":               "apiVersion: v1\nkind: Thing\nspec:\n  inf: .inf\n",
	"a folded scalar the encoder gets wrong": "apiVersion: v1\nkind: Thing\ntext: >-\n  0\n   00\nkept: >+\n  one\n\n\n",
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
	// kyaml writes the object as YAML text and reads that back, so the scalars
	// the encoder writes with another value are given the style Run writes
	// them in first.
	node := obj.CopyToResourceNode()
	restyleScalarsTheEncoderGetsWrong(node.YNode())
	want, wantErr := node.MarshalJSON()
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
