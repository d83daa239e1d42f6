package krmtest

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

// Object is an item as a JSON value.
type Object = map[string]any

// ExpectedItems are the items of the case's expected.yaml as a stream of YAML
// documents; without the local-config ones (which kustomize never emits) when
// withLocalConfig is false.
func (c Case) ExpectedItems(t testing.TB, withLocalConfig bool) []byte {
	t.Helper()
	var docs []string
	for _, item := range c.expectedList(t).Items {
		if withLocalConfig || !item.IsLocalConfig() {
			docs = append(docs, item.String())
		}
	}
	return []byte(strings.Join(docs, "---\n"))
}

func (c Case) expectedList(t testing.TB) *fn.ResourceList {
	t.Helper()
	rl, err := fn.ParseResourceList(c.Expected(t))
	if err != nil {
		t.Fatalf("case %s: expected.yaml: %v", c.Name, err)
	}
	return rl
}

// Objects reads a stream of YAML documents as objects, in order, without the
// annotations kpt and kustomize add (krm.IsOrchestratorAnnotation) and
// without an annotations map left empty.
func Objects(t testing.TB, stream string) []Object {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("reading %q: %v", stream, err)
	}
	objects := make([]Object, 0, len(nodes))
	for _, node := range nodes {
		for key := range node.GetAnnotations() {
			if krm.IsOrchestratorAnnotation(key) {
				if err := node.PipeE(yaml.ClearAnnotation(key)); err != nil {
					t.Fatal(err)
				}
			}
		}
		m, err := node.Map()
		if err != nil {
			t.Fatal(err)
		}
		if meta, ok := m["metadata"].(Object); ok {
			if annotations, ok := meta["annotations"].(Object); ok && len(annotations) == 0 {
				delete(meta, "annotations")
			}
		}
		objects = append(objects, m)
	}
	return objects
}

// SortedByIdentity sorts objects by apiVersion/kind/namespace/name and
// returns them.
func SortedByIdentity(objects []Object) []Object {
	slices.SortFunc(objects, func(a, b Object) int { return cmp.Compare(identity(a), identity(b)) })
	return objects
}

func identity(o Object) string {
	meta, _ := o["metadata"].(Object)
	var parts []string
	for _, v := range []any{o["apiVersion"], o["kind"], meta["namespace"], meta["name"]} {
		s, _ := v.(string)
		parts = append(parts, s)
	}
	return strings.Join(parts, "/")
}

// OutputKey names an object a function writes (a RolloutPlan by
// namespace/name, a preview by file, say), given the file it is in
// (config.kubernetes.io/path for an item of expected.yaml); "" for an object
// that is not one.
type OutputKey func(n *yaml.RNode, file string) string

// CheckWritten is the Package check of a function that writes objects into
// a package and changes nothing else: every file that held none of the
// objects key names is left byte for byte, every new file holds only such
// objects, and they are those of the golden output (CheckOutputs).
func CheckWritten(t testing.TB, c Case, before, after map[string]string, key OutputKey) {
	t.Helper()
	for name, content := range before {
		if !holdsOutput(t, name, content, key) && after[name] != content {
			t.Errorf("%s changed:\n--- got\n%s\n--- want\n%s", name, after[name], content)
		}
	}
	for name, content := range after {
		if _, had := before[name]; had {
			continue
		}
		for _, n := range readNodes(t, name, content) {
			if key(n, name) == "" {
				t.Errorf("the function wrote %s %s into %s, a new file", n.GetKind(), n.GetName(), name)
			}
		}
	}
	CheckOutputs(t, c, after, key)
}

func holdsOutput(t testing.TB, name, content string, key OutputKey) bool {
	t.Helper()
	if !strings.HasSuffix(name, ".yaml") {
		return false
	}
	for _, n := range readNodes(t, name, content) {
		if key(n, name) != "" {
			return true
		}
	}
	return false
}

func readNodes(t testing.TB, name, content string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(content)}).Read()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return nodes
}

// CheckOutputs fails the test unless the objects among the YAML files of a
// package that key names have, key for key, the specs of those among the
// case's expected items. Kptfile is not read.
func CheckOutputs(t testing.TB, c Case, files map[string]string, key OutputKey) {
	t.Helper()
	written := map[string]string{}
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") || name == "Kptfile" {
			continue
		}
		addSpecs(t, written, readNodes(t, name, content), func(n *yaml.RNode) string { return key(n, name) })
	}
	expected := map[string]string{}
	for _, item := range c.expectedList(t).Items {
		n := item.CopyToResourceNode()
		addSpecs(t, expected, []*yaml.RNode{n}, func(n *yaml.RNode) string { return key(n, n.GetAnnotations()[kioPathAnnotation]) })
	}
	if !reflect.DeepEqual(written, expected) {
		t.Errorf("outputs %v, want %v", slices.Sorted(maps.Keys(written)), slices.Sorted(maps.Keys(expected)))
		for k, w := range expected {
			if written[k] != w {
				t.Errorf("output %s:\n--- got\n%s\n--- want\n%s", k, written[k], w)
			}
		}
	}
}

// kioPathAnnotation is the file kpt writes an item to.
const kioPathAnnotation = "internal.config.kubernetes.io/path"

func addSpecs(t testing.TB, specs map[string]string, nodes []*yaml.RNode, key func(*yaml.RNode) string) {
	t.Helper()
	for _, n := range nodes {
		k := key(n)
		if k == "" {
			continue
		}
		spec, err := n.Pipe(yaml.Lookup("spec"))
		if err != nil || spec == nil {
			t.Fatalf("%s %s has no spec: %v", n.GetKind(), k, err)
		}
		specs[k] = spec.MustString()
	}
}

// Field is the value at fields in obj (unstructured.NestedFieldNoCopy), nil
// when absent.
func Field(obj Object, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	return v
}
