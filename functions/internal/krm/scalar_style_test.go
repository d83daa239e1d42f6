package krm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// blockScalars are block scalars as YAML text (each a value of a ConfigMap's
// data, its lines indented by six spaces), and the indicator the function
// writes them with: > folded, | literal, " double-quoted.
var blockScalars = []struct {
	name, text, indicator string
}{
	{"one line", ">-\n      one\n", ">"},
	{"lines folded into one", ">\n      one\n      two\n", ">"},
	{"a kept line break", ">-\n      one\n\n      two\n", ">"},
	{"a single trailing break", ">\n      one\n", ">"},
	{"a more-indented line", ">-\n      0\n       00\n", "|"},
	{"a more-indented line between folded ones", ">\n      one\n      two\n        indented\n      three\n", "|"},
	{"a tab-indented line", ">-\n      one\n      \ttab\n", "|"},
	{"a first line indented", ">2-\n       indented\n      next\n", "|"},
	{"kept trailing breaks", ">+\n      one\n\n\n", "|"},
	{"a long more-indented line", ">\n      one\n        " + strings.Repeat("word ", 30) + "end\n", "|"},
	{"a literal first line starting with a tab", "|2-\n      \tone\n      two\n", `"`},
	{"a folded first line starting with a tab", ">2-\n      \tone\n      two\n", `"`},
	{"a literal tab-indented line", "|-\n      one\n      \ttwo\n", "|"},
	{"a literal more-indented line", "|-\n      one\n        two\n", "|"},
}

// TestBlockScalarsKeepTheirValue proves that every block scalar comes out of a
// function with the value it went in with: in its own style where the encoder
// writes that style faithfully, in another where it would not.
func TestBlockScalarsKeepTheirValue(t *testing.T) {
	for _, tc := range blockScalars {
		t.Run(tc.name, func(t *testing.T) {
			input := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
				"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    k: " + tc.text
			want := dataValue(t, input)
			out := roundTrip(t, input)
			if got := dataValue(t, out); got != want {
				t.Errorf("value %q came out as %q:\n%s", want, got, out)
			}
			if !strings.Contains(out, "k: "+tc.indicator) {
				t.Errorf("not written with %s:\n%s", tc.indicator, out)
			}
		})
	}
}

// FuzzScalarKeepsItsValue writes a string scalar of any value, in folded,
// literal or the encoder's own style, nested at any depth (the encoder folds
// long lines by column), and reads it back.
func FuzzScalarKeepsItsValue(f *testing.F) {
	for _, tc := range blockScalars {
		value := dataValue(f, "items:\n- data:\n    k: "+tc.text)
		for style := range uint8(3) {
			f.Add(value, style, uint8(0))
		}
	}
	f.Add("a\n b\nc", uint8(0), uint8(5))
	f.Fuzz(func(t *testing.T, value string, style, depth uint8) {
		scalar := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: value,
			Style: []yaml.Style{yaml.FoldedStyle, yaml.LiteralStyle, 0}[style%3]}
		node := scalar
		for range depth % 16 {
			node = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{keyNode("k"), node}}
		}
		item := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			keyNode("apiVersion"), keyNode("v1"), keyNode("kind"), keyNode("ConfigMap"), keyNode("data"), node}}
		rl := &fn.ResourceList{Items: fn.KubeObjects{fn.MoveToKubeObject(yaml.NewRNode(item))}}
		var out bytes.Buffer
		if err := writeResourceList(&out, rl, entriesPerDocument); err != nil {
			return // not encodable at all: Run reports it
		}
		back, err := fn.ParseResourceList(out.Bytes())
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out.String())
		}
		got := Node(back.Items[0])
		for range depth%16 + 1 {
			got = got.Content[len(got.Content)-1]
		}
		if got.Value != value {
			t.Errorf("%q came out as %q:\n%s", value, got.Value, out.String())
		}
	})
}

func roundTrip(t testing.TB, input string) string {
	t.Helper()
	rl, err := fn.ParseResourceList([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeResourceList(&out, rl, entriesPerDocument); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// dataValue is the value of data.k of the first item of a ResourceList.
func dataValue(t testing.TB, list string) string {
	t.Helper()
	var rl struct {
		Items []struct {
			Data map[string]string `yaml:"data"`
		} `yaml:"items"`
	}
	if err := yaml.Unmarshal([]byte(list), &rl); err != nil || len(rl.Items) == 0 {
		t.Fatalf("%v:\n%s", err, list)
	}
	return rl.Items[0].Data["k"]
}
