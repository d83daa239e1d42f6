package krm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRunRefusesDuplicateKeys: a key given twice at the top level of the
// ResourceList (the second items: would replace the first, silently) or of
// its functionConfig is an error result with exit code 1 and no items, in
// block style (read from the lines) and in any other (parsed).
func TestRunRefusesDuplicateKeys(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"items twice", `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
`, `key "items" is given twice (lines 3 and 7)`},
		{"items twice after a document marker and comments", `---
# a comment
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
items : []
`, `key "items" is given twice (lines 5 and 6)`},
		{"flow style", `{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
"items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}],
"items": []}`, `key "items" is given twice (lines 2 and 3)`},
		{"quoted key", `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
"items": []
`, `key "items" is given twice (lines 3 and 4)`},
		{"functionConfig", `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
functionConfig:
  apiVersion: fn.fleetpolicy.io/v1alpha1
  kind: X
  policies: [a]
  policies: [b]
`, `functionConfig: key "policies" is given twice (lines 7 and 8)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Function{Name: "f", Process: func(*fn.ResourceList) error { return nil }}
			var stdout, stderr bytes.Buffer
			if code := f.Run(strings.NewReader(c.input), &stdout, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if want := "f: error: reading the ResourceList on stdin: " + c.want; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			out, err := fn.ParseResourceList(stdout.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Items) != 0 {
				t.Errorf("%d items out, want none", len(out.Items))
			}
		})
	}
}

// TestBlockTopLevelKeys: the keys read from the lines are the parser's, and
// text the lines cannot tell is left to the parser.
func TestBlockTopLevelKeys(t *testing.T) {
	keys, ok := blockTopLevelKeys([]byte(canonical))
	if !ok {
		t.Fatal("canonical is block style, but its lines were not read")
	}
	node, err := fn.ParseKubeObject([]byte(canonical))
	if err != nil {
		t.Fatal(err)
	}
	want := mappingKeys(Node(node))
	if len(keys) != len(want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for i := range keys {
		if keys[i] != want[i] {
			t.Errorf("key %d: %v, want %v", i, keys[i], want[i])
		}
	}
	for _, text := range []string{"a: 1\n---\nb: 2\n", "\"a\": 1\n", "a: \"x\n y\"\n", "? a\n: 1\n", "a: [1,\n 2]\n"} {
		if keys, ok := blockTopLevelKeys([]byte(text)); ok {
			t.Errorf("%q: read %v from the lines, want the parser asked", text, keys)
		}
	}
}

// FuzzBlockTopLevelKeys: whenever the keys are read from the lines, they are
// those the YAML parser reads.
func FuzzBlockTopLevelKeys(f *testing.F) {
	f.Add([]byte(canonical))
	f.Add([]byte("a: 1\nb:\n- x\nc: |\n  text\n# comment\nd: []\n"))
	f.Add([]byte("---\na: &x 1\nb: *x\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		keys, ok := blockTopLevelKeys(input)
		if !ok {
			return
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(input, &doc); err != nil {
			return
		}
		want := mappingKeys(&doc)
		if len(want) == 0 {
			return // not a mapping: fn.ParseResourceList refuses it
		}
		if len(keys) != len(want) {
			t.Fatalf("keys %v, want %v", keys, want)
		}
		for i := range keys {
			if keys[i] != want[i] {
				t.Fatalf("key %d: %v, want %v", i, keys[i], want[i])
			}
		}
	})
}
