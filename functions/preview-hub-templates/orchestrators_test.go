package main

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// defaultConfig is the functionConfig of the cases that have none: kustomize
// needs an object to carry the function annotation.
var defaultConfig = []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: PreviewHubTemplates\nmetadata:\n  name: preview\n")

// previewSpecs adds to specs the previews among nodes, by file (the path
// annotation kpt writes each to, or file when it is not empty), each as the
// YAML of its spec.
func previewSpecs(t *testing.T, specs map[string]string, file string, nodes []*yaml.RNode) {
	t.Helper()
	for _, n := range nodes {
		if n.GetAnnotations()[PreviewOfAnnotation] == "" {
			continue
		}
		spec, err := n.Pipe(yaml.Lookup("spec"))
		if err != nil || spec == nil {
			t.Fatalf("preview %s/%s has no spec: %v", n.GetNamespace(), n.GetName(), err)
		}
		if file == "" {
			file = n.GetAnnotations()["internal.config.kubernetes.io/path"]
		}
		specs[file] = spec.MustString()
	}
}

// expectedPreviews are the previews of the case's golden output.
func expectedPreviews(t *testing.T, c krmtest.Case) map[string]string {
	t.Helper()
	rl, err := fn.ParseResourceList(c.Expected(t))
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]string{}
	for _, item := range rl.Items {
		previewSpecs(t, specs, "", []*yaml.RNode{item.CopyToResourceNode()})
	}
	return specs
}

// writtenPreviews are the previews in the files of a package, by file.
func writtenPreviews(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	specs := map[string]string{}
	for name, content := range files {
		if !strings.HasPrefix(name, previewDir+"/") {
			continue
		}
		read, err := (&kio.ByteReader{Reader: strings.NewReader(content)}).Read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(read) != 1 {
			t.Errorf("%s holds %d objects, want one preview", name, len(read))
		}
		previewSpecs(t, specs, name, read)
	}
	return specs
}

// checkWritten checks a package after the function ran on it: every file it
// had is unchanged, byte for byte, and the new files are the golden previews.
func checkWritten(t *testing.T, c krmtest.Case, before, after map[string]string) {
	t.Helper()
	for name, content := range before {
		if after[name] != content {
			t.Errorf("%s changed:\n--- got\n%s\n--- want\n%s", name, after[name], content)
		}
	}
	for name := range after {
		if _, had := before[name]; !had && !strings.HasPrefix(name, previewDir+"/") {
			t.Errorf("the function wrote %s, outside %s/", name, previewDir)
		}
	}
	got, want := writtenPreviews(t, after), expectedPreviews(t, c)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("previews %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		for k, w := range want {
			if got[k] != w {
				t.Errorf("preview %s:\n--- got\n%s\n--- want\n%s", k, got[k], w)
			}
		}
	}
}

// TestThroughKustomize builds each case with the function as a transformer:
// previews are local-config, which kustomize never emits, so a successful
// build equals the build without the function; a failing case fails the
// build with its messages on stderr.
func TestThroughKustomize(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, "preview-hub-templates")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			config := c.Config
			if config == nil {
				config = defaultConfig
			}
			want := krmtest.KustomizeBuild(t, kustomize, krmtest.WritePlainKustomization(t, c.Items))
			if want.Err != nil {
				t.Fatalf("plain build: %v\n%s", want.Err, want.Stderr)
			}
			out := krmtest.KustomizeBuild(t, kustomize, krmtest.WriteKustomization(t, bin, c.Items, config))
			krmtest.CheckRun(t, c, out)
			if out.Err == nil && out.Stdout != want.Stdout {
				t.Errorf("the function changed the build:\n--- got\n%s\n--- want\n%s", out.Stdout, want.Stdout)
			}
		})
	}
}

// TestThroughKptRender renders each case as a kpt package twice: the first
// render writes the golden previews, one file each, and leaves every other
// file alone; the second changes nothing. A failing case leaves the package
// as it was.
func TestThroughKptRender(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "preview-hub-templates")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			pkg := krmtest.WriteKptPackage(t, bin, c.Items, c.Config, "mutators")
			before := krmtest.ReadDir(t, pkg)
			out := krmtest.KptRender(t, kpt, pkg)
			krmtest.CheckRun(t, c, out)
			after := krmtest.ReadDir(t, pkg)
			if out.Err != nil {
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a failed render changed the package:\n%v", after)
				}
				return
			}
			checkWritten(t, c, before, after)
			krmtest.CheckRun(t, c, krmtest.KptRender(t, kpt, pkg))
			if again := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(again, after) {
				t.Errorf("the second render changed the package:\n--- got\n%v\n--- want\n%v", again, after)
			}
		})
	}
}

// TestThroughKptEval runs each case with kpt fn eval, twice, as
// TestThroughKptRender.
func TestThroughKptEval(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "preview-hub-templates")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			pkg, config := krmtest.WriteEvalPackage(t, c.Items, c.Config)
			before := krmtest.ReadDir(t, pkg)
			out := krmtest.KptEval(t, kpt, pkg, bin, config)
			krmtest.CheckRun(t, c, out)
			after := krmtest.ReadDir(t, pkg)
			if out.Err != nil {
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a failed eval changed the package:\n%v", after)
				}
				return
			}
			checkWritten(t, c, before, after)
			krmtest.CheckRun(t, c, krmtest.KptEval(t, kpt, pkg, bin, config))
			if again := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(again, after) {
				t.Errorf("the second eval changed the package:\n--- got\n%v\n--- want\n%v", again, after)
			}
		})
	}
}
