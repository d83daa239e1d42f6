package main

import (
	"reflect"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// defaultConfig is the functionConfig of the cases that have none: kustomize
// needs an object to carry the function annotation.
var defaultConfig = []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: ValidateDependencies\nmetadata:\n  name: validate-dependencies\n")

func TestThroughKustomize(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	bin := krmtest.BuildFunction(t, "validate-dependencies")
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
			// The function changed nothing: the build equals a build without it.
			want := krmtest.KustomizeBuild(t, kustomize, krmtest.WritePlainKustomization(t, c.Items))
			if want.Err != nil {
				t.Fatalf("plain build: %v\n%s", want.Err, want.Stderr)
			}
			if out.Stdout != want.Stdout {
				t.Errorf("the function changed the build:\n--- got\n%s\n--- want\n%s", out.Stdout, want.Stdout)
			}
		})
	}
}

func TestThroughKptRender(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "validate-dependencies")
	for _, stage := range []string{"validators", "mutators"} {
		for _, c := range krmtest.Cases(t, "testdata") {
			t.Run(stage+"/"+c.Name, func(t *testing.T) {
				pkg := krmtest.WriteKptPackage(t, bin, c.Items, c.Config, stage)
				before := krmtest.ReadDir(t, pkg)
				krmtest.CheckRun(t, c, krmtest.KptRender(t, kpt, pkg))
				// Every file is left byte for byte, comments included, and a
				// second render changes nothing either.
				if after := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(after, before) {
					t.Fatalf("render changed the package:\n--- got\n%v\n--- want\n%v", after, before)
				}
				krmtest.CheckRun(t, c, krmtest.KptRender(t, kpt, pkg))
				if again := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(again, before) {
					t.Errorf("the second render changed the package:\n--- got\n%v\n--- want\n%v", again, before)
				}
			})
		}
	}
}

func TestThroughKptEval(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "validate-dependencies")
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			pkg, config := krmtest.WriteEvalPackage(t, c.Items, c.Config)
			before := krmtest.ReadDir(t, pkg)
			krmtest.CheckRun(t, c, krmtest.KptEval(t, kpt, pkg, bin, config))
			if after := krmtest.ReadDir(t, pkg); !reflect.DeepEqual(after, before) {
				t.Errorf("eval changed the package:\n--- got\n%v\n--- want\n%v", after, before)
			}
		})
	}
}
