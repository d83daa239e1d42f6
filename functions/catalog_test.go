// Package functions_test keeps catalog.yaml, the index of the KRM functions,
// in step with the functions under functions/.
package functions_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

type catalog struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Functions  []function `json:"functions"`
}

type function struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	Version        string `json:"version"`
	Image          string `json:"image"`
	Exec           string `json:"exec"`
	FunctionConfig struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	} `json:"functionConfig"`
	Examples []string `json:"examples"`
	Tags     []string `json:"tags"`
}

var configKindDecl = regexp.MustCompile(`configKind\s*=\s*"([A-Za-z]+)"`)

// readCatalog returns the repository's root and its catalog.yaml, read
// strictly.
func readCatalog(t *testing.T) (root string, cat catalog) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, &cat); err != nil {
		t.Fatalf("catalog.yaml: %v", err)
	}
	return root, cat
}

// TestCatalogMatchesFunctions fails when catalog.yaml and functions/ disagree:
// a function missing from the catalog or listed but absent, a listed function
// that does not build or reports another version, a functionConfig kind the
// function does not read, an image or exec path not named after the function,
// or an example path that does not exist.
func TestCatalogMatchesFunctions(t *testing.T) {
	root, cat := readCatalog(t)
	if cat.APIVersion != "fn.fleetpolicy.io/v1alpha1" || cat.Kind != "FunctionCatalog" {
		t.Fatalf("catalog.yaml is %s %s", cat.APIVersion, cat.Kind)
	}

	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk, listed []string
	for _, m := range mains {
		onDisk = append(onDisk, filepath.Base(filepath.Dir(m)))
	}
	for _, f := range cat.Functions {
		listed = append(listed, f.Name)
	}
	slices.Sort(onDisk)
	slices.Sort(listed)
	if !slices.Equal(onDisk, listed) {
		t.Fatalf("catalog.yaml lists %v; functions/ holds %v", listed, onDisk)
	}

	bin := t.TempDir()
	for _, f := range cat.Functions {
		t.Run(f.Name, func(t *testing.T) {
			if f.Description == "" || len(f.Tags) == 0 || len(f.Examples) == 0 {
				t.Error("description, tags and examples are required")
			}
			if f.Version != krm.Version {
				t.Errorf("version %s, the functions are released as %s", f.Version, krm.Version)
			}
			if want := "ghcr.io/fleetpolicy/" + f.Name + ":" + f.Version; f.Image != want {
				t.Errorf("image %s, want %s", f.Image, want)
			}
			if want := "bin/" + f.Name; f.Exec != want {
				t.Errorf("exec %s, want %s (what `make build` writes)", f.Exec, want)
			}
			src, err := os.ReadFile(filepath.Join(root, "functions", f.Name, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			m := configKindDecl.FindSubmatch(src)
			if m == nil || string(m[1]) != f.FunctionConfig.Kind || f.FunctionConfig.APIVersion != "fn.fleetpolicy.io/v1alpha1" {
				t.Errorf("functionConfig %s %s; main.go reads kind %q", f.FunctionConfig.APIVersion, f.FunctionConfig.Kind, m)
			}
			for _, ex := range f.Examples {
				if _, err := os.Stat(filepath.Join(root, ex)); err != nil {
					t.Errorf("example %s: %v", ex, err)
				}
			}
			krmtest.SkipUnderShort(t) // the rest builds the function
			out := filepath.Join(bin, f.Name)
			build := exec.Command("go", "build", "-o", out, "./"+f.Name)
			build.Dir = filepath.Join(root, "functions")
			if msg, err := build.CombinedOutput(); err != nil {
				t.Fatalf("does not build: %v\n%s", err, msg)
			}
			version, err := exec.Command(out, "--version").Output()
			if err != nil {
				t.Fatalf("--version: %v", err)
			}
			if got, want := strings.TrimSpace(string(version)), f.Name+" "+f.Version; got != want {
				t.Errorf("--version says %q, catalog says %q", got, want)
			}
		})
	}
}
