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
var defaultConfig = []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: PlanRollout\nmetadata:\n  name: plan-rollout\n")

// expectedPlans are the RolloutPlans of the case's expected output, by
// namespace/name, each as the YAML of its spec.
func expectedPlans(t *testing.T, c krmtest.Case) map[string]string {
	t.Helper()
	rl, err := fn.ParseResourceList(c.Expected(t))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*yaml.RNode
	for _, item := range rl.Items {
		nodes = append(nodes, item.CopyToResourceNode())
	}
	return plansOf(t, nodes)
}

// packagePlans are the RolloutPlans in the YAML files of a package.
func packagePlans(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	var nodes []*yaml.RNode
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") || name == "Kptfile" {
			continue
		}
		read, err := (&kio.ByteReader{Reader: strings.NewReader(content)}).Read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nodes = append(nodes, read...)
	}
	return plansOf(t, nodes)
}

func plansOf(t *testing.T, nodes []*yaml.RNode) map[string]string {
	t.Helper()
	plans := map[string]string{}
	for _, n := range nodes {
		if n.GetKind() != "RolloutPlan" {
			continue
		}
		spec, err := n.Pipe(yaml.Lookup("spec"))
		if err != nil || spec == nil {
			t.Fatalf("RolloutPlan %s has no spec: %v", n.GetName(), err)
		}
		plans[n.GetNamespace()+"/"+n.GetName()] = spec.MustString()
	}
	return plans
}

// planFree are the files of a package that held no RolloutPlan.
func planFree(files map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range files {
		if !strings.Contains(content, "kind: RolloutPlan") {
			out[name] = content
		}
	}
	return out
}

// checkWritten checks a package after the function ran on it: every file that
// held no plan is unchanged, byte for byte, and the plans are those of the
// golden output.
func checkWritten(t *testing.T, c krmtest.Case, before, after map[string]string) {
	t.Helper()
	for name, content := range planFree(before) {
		if after[name] != content {
			t.Errorf("%s changed:\n--- got\n%s\n--- want\n%s", name, after[name], content)
		}
	}
	got, want := packagePlans(t, after), expectedPlans(t, c)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RolloutPlans %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		for k, w := range want {
			if got[k] != w {
				t.Errorf("RolloutPlan %s:\n--- got\n%s\n--- want\n%s", k, got[k], w)
			}
		}
	}
}

func TestThroughKustomize(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, "plan-rollout")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			config := c.Config
			if config == nil {
				config = defaultConfig
			}
			want := krmtest.KustomizeBuild(t, kustomize, krmtest.WritePlainKustomization(t, c.Items))
			out := krmtest.KustomizeBuild(t, kustomize, krmtest.WriteKustomization(t, bin, c.Items, config))
			if want.Err != nil {
				// kustomize refuses the input itself (two objects with one id)
				// before any function runs.
				if out.Err == nil {
					t.Fatalf("kustomize refuses the input without the function (%s) but not with it", want.Stderr)
				}
				return
			}
			krmtest.CheckRun(t, c, out)
			if out.Err != nil {
				return
			}
			// The plans are local-config, which kustomize never emits: the build
			// equals a build without the function.
			if out.Stdout != want.Stdout {
				t.Errorf("the function changed the build:\n--- got\n%s\n--- want\n%s", out.Stdout, want.Stdout)
			}
		})
	}
}

// TestThroughKptRender renders each case as a kpt package twice: the first
// render writes the golden plans and leaves every other file alone; the second
// changes nothing. A failing case leaves the package as it was.
func TestThroughKptRender(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "plan-rollout")
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

// TestThroughKptEval runs each case with kpt fn eval, twice, as TestThroughKptRender.
func TestThroughKptEval(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "plan-rollout")
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
