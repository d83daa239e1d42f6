package crdtest

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

// TestCRDKustomizationListsEveryCRD keeps manifests/crds/kustomization.yaml (what
// deployments install) equal to the CRD files the tests install.
func TestCRDKustomizationListsEveryCRD(t *testing.T) {
	root := testkit.RepoRoot(t)
	crds := filepath.Join(root, "manifests", "crds")
	raw, err := os.ReadFile(filepath.Join(crds, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range localplane.CRDDirs {
		found, err := localplane.ManifestFiles(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			rel, _ := filepath.Rel(crds, f)
			files = append(files, rel)
		}
	}
	listed := append([]string(nil), k.Resources...)
	sort.Strings(listed)
	sort.Strings(files)
	if len(files) == 0 || !slices.Equal(listed, files) {
		t.Fatalf("manifests/crds/kustomization.yaml resources\n  %v\ndiffer from the CRD files\n  %v", listed, files)
	}
}
