package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// defaultConfig is the functionConfig of the cases that have none: kustomize
// needs an object to carry the function annotation.
var defaultConfig = []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: CheckPlacement\nmetadata:\n  name: check-placement\n")

// absoluteConfig is the case's functionConfig, nil when it has none, with the files it names made
// absolute (they are relative to this directory, where go test runs the
// function; kustomize runs it in the kustomization's directory).
func absoluteConfig(t testing.TB, c krmtest.Case) []byte {
	t.Helper()
	if c.Config == nil {
		return nil
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

// TestThroughOrchestrators runs every golden case through kustomize, kpt fn
// render and kpt fn eval. A build is the build of the expected items:
// annotated as the golden output says, everything else as it was. In a
// package, resources.yaml holds the expected objects (kpt keeps each file's
// own style, e.g. indented sequences, so objects are compared; the
// in-process and kustomize tests compare bytes), and a case with nothing to
// annotate changes no file.
func TestThroughOrchestrators(t *testing.T) {
	krmtest.Orchestrators{
		Function:      name,
		DefaultConfig: defaultConfig,
		Config:        absoluteConfig,
		Build: func(t testing.TB, k krmtest.KustomizeRun, c krmtest.Case, stdout string) {
			t.Helper()
			if want := k.PlainBuild(t, c.ExpectedItems(t, true)); stdout != want {
				t.Errorf("the build differs from the expected items:\n--- got\n%s\n--- want\n%s", stdout, want)
			}
		},
		Package: func(t testing.TB, c krmtest.Case, before, after map[string]string) {
			t.Helper()
			want := c.ExpectedItems(t, true)
			if got := krmtest.Objects(t, after["resources.yaml"]); !reflect.DeepEqual(got, krmtest.Objects(t, string(want))) {
				t.Errorf("resources.yaml:\n--- got\n%s\n--- want\n%s", after["resources.yaml"], want)
			}
			if reflect.DeepEqual(krmtest.Objects(t, string(c.Items)), krmtest.Objects(t, string(want))) {
				krmtest.Unchanged(t, c, before, after)
			}
		},
	}.Run(t)
}

// TestKustomizeRelativeFilesAndExplainFlag lays out the EU/PCI example as a
// user would: the policies and the inventory in files next to the
// kustomization, named relative to it, and the function run with args
// [--explain].
func TestKustomizeRelativeFilesAndExplainFlag(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, name)
	examples := filepath.Join(krmtest.RepoRoot(t), "examples", "placement")
	read := func(file string) []byte {
		b, err := os.ReadFile(filepath.Join(examples, file))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	config := func(args string) []byte {
		return []byte(`apiVersion: fn.fleetpolicy.io/v1alpha1
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
`)
	}
	files := map[string][]byte{
		"kustomization.yaml":   []byte("resources:\n- apps.yaml\ntransformers:\n- check-placement.yaml\n"),
		"apps.yaml":            read("apps.yaml"),
		"hub/policy-rego.yaml": read("policy-rego.yaml"),
		"hub/clusters.yaml":    read("clusters.yaml"),
		"check-placement.yaml": config(""),
	}
	dir := t.TempDir()
	krmtest.WriteFiles(t, dir, files)
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
	krmtest.WriteFiles(t, dir, files)
	explained := krmtest.KustomizeBuild(t, kustomize, dir)
	if explained.Err != nil {
		t.Fatalf("%v\n%s", explained.Err, explained.Stderr)
	}
	if want := (krmtest.KustomizeRun{Kustomize: kustomize}).PlainBuild(t, files["apps.yaml"]); explained.Stdout != want {
		t.Errorf("--explain changed the build:\n--- got\n%s\n--- want\n%s", explained.Stdout, want)
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
	pkg, config := krmtest.WriteEvalPackage(t, c.Items, absoluteConfig(t, c))
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
