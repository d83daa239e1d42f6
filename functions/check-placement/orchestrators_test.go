package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// defaultConfig is the functionConfig of the cases that have none: kustomize
// needs an object to carry the function annotation.
var defaultConfig = []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: CheckPlacement\nmetadata:\n  name: check-placement\n")

// absoluteConfig is the case's functionConfig with the files it names made
// absolute (they are relative to this directory, where go test runs the
// function; kustomize runs it in the kustomization's directory).
func absoluteConfig(t *testing.T, c krmtest.Case) []byte {
	t.Helper()
	if c.Config == nil {
		return defaultConfig
	}
	node, err := yaml.Parse(string(c.Config))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"policies", "clusters"} {
		list, err := node.Pipe(yaml.Lookup(field))
		if err != nil || list == nil {
			continue
		}
		for _, elem := range list.YNode().Content {
			if _, err := os.Stat(elem.Value); err == nil { // a missing file stays as the case names it
				if elem.Value, err = filepath.Abs(elem.Value); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return []byte(node.MustString())
}

// expectedItems are the items of the case's expected.yaml as a YAML stream.
func expectedItems(t *testing.T, c krmtest.Case) []byte {
	t.Helper()
	rl, err := fn.ParseResourceList(c.Expected(t))
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]string, len(rl.Items))
	for i, item := range rl.Items {
		docs[i] = item.String()
	}
	return []byte(strings.Join(docs, "---\n"))
}

// objects parses a YAML stream.
func objects(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, doc := range strings.Split(stream, "\n---\n") {
		var obj map[string]any
		if err := sigsyaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			objs = append(objs, obj)
		}
	}
	return objs
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plainBuild is kustomize's build of items without any function.
func plainBuild(t *testing.T, kustomize string, items []byte) string {
	t.Helper()
	out := krmtest.KustomizeBuild(t, kustomize, krmtest.WritePlainKustomization(t, items))
	if out.Err != nil {
		t.Fatalf("plain build: %v\n%s", out.Err, out.Stderr)
	}
	return out.Stdout
}

func TestThroughKustomize(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, name)
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			out := krmtest.KustomizeBuild(t, kustomize, krmtest.WriteKustomization(t, bin, c.Items, absoluteConfig(t, c)))
			krmtest.CheckRun(t, c, out)
			if out.Err != nil {
				return
			}
			// The build is the build of the expected items: annotated as the
			// golden output says, everything else as it was.
			if want := plainBuild(t, kustomize, expectedItems(t, c)); out.Stdout != want {
				t.Errorf("the build differs from the expected items:\n--- got\n%s\n--- want\n%s", out.Stdout, want)
			}
		})
	}
}

// TestKustomizeRelativeFilesAndExplainFlag lays out the EU/PCI example as a
// user would: the policies and the inventory in files next to the
// kustomization, named relative to it, and the function run with args
// [--explain].
func TestKustomizeRelativeFilesAndExplainFlag(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, name)
	examples := filepath.Join(krmtest.RepoRoot(t), "examples", "placement")
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join(examples, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	config := func(args string) string {
		return `apiVersion: fn.fleetpolicy.io/v1alpha1
kind: CheckPlacement
metadata:
  name: check-placement
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ` + bin + args + `
policies:
- hub/policy-rego.yaml
clusters:
- hub/clusters.yaml
`
	}
	files := map[string]string{
		"kustomization.yaml":   "resources:\n- apps.yaml\ntransformers:\n- check-placement.yaml\n",
		"apps.yaml":            read("apps.yaml"),
		"hub/policy-rego.yaml": read("policy-rego.yaml"),
		"hub/clusters.yaml":    read("clusters.yaml"),
		"check-placement.yaml": config(""),
	}
	dir := t.TempDir()
	writeFiles(t, dir, files)
	out := krmtest.KustomizeBuild(t, kustomize, dir)
	if out.Err != nil {
		t.Fatalf("%v\n%s", out.Err, out.Stderr)
	}
	if !strings.Contains(out.Stdout, "placement.fleetpolicy.io/clusters: eu-dublin,eu-frankfurt\n") ||
		!strings.Contains(out.Stdout, "placement.fleetpolicy.io/clusters: eu-dublin,eu-frankfurt,eu-paris\n") {
		t.Errorf("the Policies are not annotated:\n%s", out.Stdout)
	}

	files["check-placement.yaml"] = config("\n        args: [--explain]")
	dir = t.TempDir()
	writeFiles(t, dir, files)
	explained := krmtest.KustomizeBuild(t, kustomize, dir)
	if explained.Err != nil {
		t.Fatalf("%v\n%s", explained.Err, explained.Stderr)
	}
	if want := plainBuild(t, kustomize, []byte(read("apps.yaml"))); explained.Stdout != want {
		t.Errorf("--explain changed the build:\n--- got\n%s\n--- want\n%s", explained.Stdout, want)
	}
}

func TestThroughKptRender(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, name)
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			pkg := krmtest.WriteKptPackage(t, bin, c.Items, absoluteConfig(t, c), "mutators")
			before := krmtest.ReadDir(t, pkg)
			krmtest.CheckRun(t, c, krmtest.KptRender(t, kpt, pkg))
			after := krmtest.ReadDir(t, pkg)
			if len(c.ErrorMessages(t)) > 0 {
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a failed render changed the package")
				}
				return
			}
			// kpt keeps each file's own style (e.g. indented sequences), so the
			// objects are compared; the in-process and kustomize tests compare
			// bytes.
			if got, want := objects(t, after["resources.yaml"]), objects(t, string(expectedItems(t, c))); !reflect.DeepEqual(got, want) {
				t.Errorf("resources.yaml after render:\n--- got\n%s\n--- want\n%s", after["resources.yaml"], expectedItems(t, c))
			}
			if reflect.DeepEqual(objects(t, string(c.Items)), objects(t, string(expectedItems(t, c)))) && !reflect.DeepEqual(after, before) {
				t.Errorf("nothing to annotate, yet the render changed the package")
			}
			// A second render changes nothing: the annotations are already set.
			krmtest.CheckRun(t, c, krmtest.KptRender(t, kpt, pkg))
			if again := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(again, after) {
				t.Errorf("the second render changed the package:\n--- got\n%v\n--- want\n%v", again, after)
			}
		})
	}
}

// TestKptEvalExplain runs `kpt fn eval --exec "check-placement --explain"`:
// the package is left as it is and the decisions are printed.
func TestKptEvalExplain(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, name)
	var c krmtest.Case
	for _, each := range krmtest.Cases(t, "testdata") {
		if each.Name == "examples-rego" {
			c = each
		}
	}
	pkg := t.TempDir()
	writeFiles(t, pkg, map[string]string{"resources.yaml": string(c.Items)})
	config := filepath.Join(t.TempDir(), "fn-config.yaml")
	writeFiles(t, filepath.Dir(config), map[string]string{filepath.Base(config): string(absoluteConfig(t, c))})
	before := krmtest.ReadDir(t, pkg)
	out := krmtest.KptEval(t, kpt, pkg, bin+" "+explainFlag, config)
	if out.Err != nil {
		t.Fatalf("%v\n%s\n%s", out.Err, out.Stdout, out.Stderr)
	}
	for _, want := range []string{
		"cluster eu-dublin: allowed: fleetpolicy-placement/eu-pci-rego[eu-pci.rego]: selects the cluster",
		"cluster eu-paris: excluded: fleetpolicy-placement/eu-pci-rego[eu-pci.rego]: PCI compliance level 1 is below 2",
	} {
		if !strings.Contains(out.Stdout+out.Stderr, want) {
			t.Errorf("%q is not shown:\n%s\n%s", want, out.Stdout, out.Stderr)
		}
	}
	if after := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(after, before) {
		t.Errorf("--explain changed the package:\n--- got\n%v\n--- want\n%v", after, before)
	}
}
