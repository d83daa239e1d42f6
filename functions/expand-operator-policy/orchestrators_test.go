package main

import (
	"bytes"
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// defaultConfig is the functionConfig of the cases that have none: kustomize
// needs an object to carry the function annotation.
var defaultConfig = []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: ExpandOperatorPolicy\nmetadata:\n  name: expand-operator-policy\n")

// object is an item as a JSON value without the orchestrators' annotations.
type object = map[string]any

// expectedObjects are the items of the case's expected.yaml; without the
// local-config ones when withLocalConfig is false.
func expectedObjects(t *testing.T, c krmtest.Case, withLocalConfig bool) []object {
	t.Helper()
	rl, err := fn.ParseResourceList(c.Expected(t))
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	for _, item := range rl.Items {
		if withLocalConfig || !item.IsLocalConfig() {
			stream.WriteString("---\n" + item.String())
		}
	}
	return objectsOf(t, stream.String())
}

// objectsOf reads a stream of YAML documents as objects, sorted by identity.
func objectsOf(t *testing.T, stream string) []object {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("reading %q: %v", stream, err)
	}
	objects := make([]object, 0, len(nodes))
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
		if meta, ok := m["metadata"].(object); ok {
			if annotations, ok := meta["annotations"].(object); ok && len(annotations) == 0 {
				delete(meta, "annotations")
			}
		}
		objects = append(objects, m)
	}
	slices.SortFunc(objects, func(a, b object) int { return cmp.Compare(identity(a), identity(b)) })
	return objects
}

// identity is apiVersion/kind/namespace/name of o.
func identity(o object) string {
	meta, _ := o["metadata"].(object)
	var parts []string
	for _, v := range []any{o["apiVersion"], o["kind"], meta["namespace"], meta["name"]} {
		s, _ := v.(string)
		parts = append(parts, s)
	}
	return strings.Join(parts, "/")
}

// checkObjects fails the test unless stream holds exactly the objects of the
// case's expected output (kustomize leaves out local-config ones).
func checkObjects(t *testing.T, c krmtest.Case, stream string, withLocalConfig bool) {
	t.Helper()
	if got, want := objectsOf(t, stream), expectedObjects(t, c, withLocalConfig); !reflect.DeepEqual(got, want) {
		t.Errorf("objects differ from the golden output:\n--- got\n%v\n--- want\n%v", got, want)
	}
}

// otherDocuments are the documents of input.yaml the function does not own,
// as written.
func otherDocuments(t *testing.T, c krmtest.Case) []string {
	t.Helper()
	var docs []string
	for _, doc := range strings.Split(strings.TrimSuffix(string(c.Items), "\n"), "\n---\n") {
		obj, err := fn.ParseKubeObject([]byte(doc))
		if err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		if !isOwned(obj) {
			docs = append(docs, doc+"\n")
		}
	}
	return docs
}

func TestThroughKustomize(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, "expand-operator-policy")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			config := c.Config
			if config == nil {
				config = defaultConfig
			}
			out := krmtest.KustomizeBuild(t, kustomize, krmtest.WriteKustomization(t, bin, c.Items, config))
			krmtest.CheckRun(t, c, out)
			if out.Err != nil {
				return
			}
			checkObjects(t, c, out.Stdout, false)
			// The build run through the function again is the same build.
			again := krmtest.KustomizeBuild(t, kustomize, krmtest.WriteKustomization(t, bin, []byte(out.Stdout), config))
			if again.Err != nil {
				t.Fatalf("second build: %v\n%s", again.Err, again.Stderr)
			}
			if again.Stdout != out.Stdout {
				t.Errorf("the second build differs:\n--- got\n%s\n--- want\n%s", again.Stdout, out.Stdout)
			}
		})
	}
}

// checkPackage checks a kpt package the function ran on: on failure it is
// unchanged; otherwise resources.yaml holds the expected objects, the items
// the function does not own exactly as written, and no other file changed or
// appeared.
func checkPackage(t *testing.T, c krmtest.Case, pkg string, before map[string]string, out krmtest.Output) {
	t.Helper()
	krmtest.CheckRun(t, c, out)
	after := krmtest.ReadDir(t, pkg)
	if out.Err != nil {
		if !reflect.DeepEqual(after, before) {
			t.Errorf("a failed run changed the package:\n--- got\n%v\n--- want\n%v", after, before)
		}
		return
	}
	resources := after["resources.yaml"]
	checkObjects(t, c, resources, true)
	for _, doc := range otherDocuments(t, c) {
		if !strings.Contains(resources, doc) {
			t.Errorf("resources.yaml does not hold, as written:\n%s\nresources.yaml:\n%s", doc, resources)
		}
	}
	delete(after, "resources.yaml")
	delete(before, "resources.yaml")
	if !reflect.DeepEqual(after, before) {
		t.Errorf("files other than resources.yaml changed:\n--- got\n%v\n--- want\n%v", after, before)
	}
}

func TestThroughKptRender(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "expand-operator-policy")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			pkg := krmtest.WriteKptPackage(t, bin, c.Items, c.Config, "mutators")
			first := krmtest.KptRender(t, kpt, pkg)
			checkPackage(t, c, pkg, krmtest.ReadDir(t, pkg), first)
			// A second render fails or passes as the first did, and changes nothing.
			rendered := krmtest.ReadDir(t, pkg)
			if second := krmtest.KptRender(t, kpt, pkg); (second.Err != nil) != (first.Err != nil) {
				t.Fatalf("second render: %v, first: %v\n%s", second.Err, first.Err, second.Stderr)
			}
			if again := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(again, rendered) {
				t.Errorf("the second render changed the package:\n--- got\n%v\n--- want\n%v", again, rendered)
			}
		})
	}
}

func TestThroughKptEval(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "expand-operator-policy")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			pkg, config := krmtest.WriteEvalPackage(t, c.Items, c.Config)
			checkPackage(t, c, pkg, krmtest.ReadDir(t, pkg), krmtest.KptEval(t, kpt, pkg, bin, config))
		})
	}
}
