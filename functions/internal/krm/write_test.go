package krm

import (
	"bytes"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// footComments is a ResourceList whose items carry what the YAML encoder could
// write differently when the list is encoded in batches: comments above, beside
// and below items and their fields (the encoder carries a foot comment over to
// the next item), block scalars that keep their trailing line breaks, anchors
// and flow items.
const footComments = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data:
    k: v
    # foot comment of the last field

- # head comment
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
  data:
    k: v
# foot comment of the item

- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c} # line comment
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: d
  data:
    kept: |+
      trailing breaks


- {apiVersion: v1, kind: ConfigMap, metadata: {name: e}}
- &item
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: f
  data:
    folded: >
      one
      two
    # foot comment of the last field
# foot comment of the last item
`

// TestWriteResourceListInBatches proves that encoding the items and results in
// batches, of any size, writes the bytes of the whole list encoded as one
// document.
func TestWriteResourceListInBatches(t *testing.T) {
	type list struct {
		name  string
		input string
		edit  func(items []*yaml.Node) // what a function may set that no parse does
	}
	lists := []list{
		{name: "canonical", input: canonical},
		{name: "parsed foot comments", input: footComments},
		{name: "foot comments of items and of their last fields", input: footComments,
			edit: func(items []*yaml.Node) {
				items[0].FootComment = "# foot comment of the first item"
				last := items[1].Content[len(items[1].Content)-1]
				last.FootComment = "# foot comment of the last value of the second item"
			}},
		{name: "a foot comment on the last item", input: footComments,
			edit: func(items []*yaml.Node) { items[len(items)-1].FootComment = "# foot comment of the last item" }},
		{name: "no items", input: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"},
	}
	results := fn.Results{
		{Severity: fn.Error, Message: "multi-line\nmessage: with 'quotes' and \"double quotes\"",
			ResourceRef: &fn.ResourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "a"}, Field: &fn.Field{Path: "data"},
			File: &fn.File{Path: "a.yaml", Index: 1}},
		{Severity: fn.Warning, Message: "- looks like a list item: and a key", Tags: map[string]string{"b": "2", "a": "yes"}},
		{Severity: fn.Info, Message: "010"},
		{Message: "trailing space ", Field: &fn.Field{Path: "spec", CurrentValue: map[string]any{"k": []any{1, "x"}}, ProposedValue: true}},
	}
	for _, l := range lists {
		for _, withResults := range []bool{false, true} {
			rl, err := fn.ParseResourceList([]byte(l.input))
			if err != nil {
				t.Fatalf("%s: %v", l.name, err)
			}
			if l.edit != nil {
				nodes := make([]*yaml.Node, len(rl.Items))
				for i, item := range rl.Items {
					nodes[i] = Node(item)
				}
				l.edit(nodes)
			}
			if withResults {
				rl.Results = results
			}
			whole := oneDocument(t, rl)
			for batchSize := 1; batchSize <= len(rl.Items)+len(rl.Results); batchSize++ {
				if got := write(t, rl, batchSize); got != whole {
					t.Errorf("%s, results %v, batches of %d:\n%s\n--- want, as one document\n%s", l.name, withResults, batchSize, got, whole)
				}
			}
		}
	}
}

// oneDocument is rl written the plain way: the whole list as one YAML
// document, the results converted to YAML through their YAML text.
func oneDocument(t testing.TB, rl *fn.ResourceList) string {
	t.Helper()
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, item := range rl.Items {
		items.Content = append(items.Content, item.CopyToResourceNode().YNode())
	}
	list := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		keyNode("apiVersion"), yaml.NewStringRNode("config.kubernetes.io/v1").YNode(),
		keyNode("kind"), yaml.NewStringRNode("ResourceList").YNode(),
		keyNode("items"), items,
	}}
	if len(rl.Results) > 0 {
		text, err := yaml.Marshal(rl.Results)
		if err != nil {
			t.Fatal(err)
		}
		list.Content = append(list.Content, keyNode("results"), yaml.MustParse(string(text)).YNode())
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	if err := enc.Encode(list); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func write(t testing.TB, rl *fn.ResourceList, batchSize int) string {
	t.Helper()
	var out bytes.Buffer
	if err := writeResourceList(&out, rl, batchSize); err != nil {
		t.Fatalf("batches of %d: %v", batchSize, err)
	}
	return out.String()
}

func FuzzWriteResourceListInBatches(f *testing.F) {
	for _, input := range []string{canonical, footComments} {
		f.Add([]byte(input))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		rl, err := fn.ParseResourceList(input)
		if err != nil {
			return
		}
		var whole bytes.Buffer
		if writeResourceList(&whole, rl, len(rl.Items)+1) != nil {
			return // not encodable at all: Run reports it
		}
		if got := write(t, rl, 1); got != whole.String() {
			t.Errorf("batches of 1:\n%s\n--- want, as one document\n%s", got, whole.String())
		}
	})
}
