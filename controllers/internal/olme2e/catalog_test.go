package olme2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/olm-catalog/catalog from testdata/bundle")

// The catalog's one package and channel.
const (
	catalogPackage = "tiny-operator"
	catalogChannel = "stable"
)

// bundleDir holds the catalog's bundles, one directory of manifests each.
const bundleDir = "testdata/bundle"

// fixtureDir is the fixture localplane.StartOLM serves: the catalog rendered
// from bundleDir, its CatalogSource and the OperatorPolicy the test enforces.
func fixtureDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(testkit.RepoRoot(t), localplane.OLMCatalogDir)
}

// TestCatalogIsTheBundles checks that the file-based catalog of
// testdata/olm-catalog is the rendering of the bundle manifests: one bundle per
// directory of testdata/bundle, each manifest embedded as an
// olm.bundle.object, in one channel following the CSVs' replaces.
func TestCatalogIsTheBundles(t *testing.T) {
	dir := fixtureDir(t)
	want, err := renderCatalog(bundleDir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "catalog", catalogPackage, "catalog.json")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the rendering of the bundle manifests: run this test with -update", path)
	}
}

// catalogBundle is one bundle read from its directory of manifests.
type catalogBundle struct {
	csv     operatorsv1alpha1.ClusterServiceVersion
	objects [][]byte // each manifest as JSON, in file name order
}

// The documents of a file-based catalog, fields in the order opm writes them.
type (
	fbcPackage struct {
		Schema         string `json:"schema"`
		Name           string `json:"name"`
		DefaultChannel string `json:"defaultChannel"`
	}
	fbcChannel struct {
		Schema  string            `json:"schema"`
		Name    string            `json:"name"`
		Package string            `json:"package"`
		Entries []fbcChannelEntry `json:"entries"`
	}
	fbcChannelEntry struct {
		Name     string `json:"name"`
		Replaces string `json:"replaces,omitempty"`
	}
	fbcBundle struct {
		Schema     string        `json:"schema"`
		Name       string        `json:"name"`
		Package    string        `json:"package"`
		Image      string        `json:"image"`
		Properties []fbcProperty `json:"properties"`
	}
	fbcProperty struct {
		Type  string `json:"type"`
		Value any    `json:"value"`
	}
)

// renderCatalog renders the bundles under dir as a file-based catalog in
// JSON, as `opm render` writes one.
func renderCatalog(dir string) ([]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bundles []catalogBundle
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := readBundle(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		bundles = append(bundles, b)
	}
	if len(bundles) == 0 {
		return nil, fmt.Errorf("%s: no bundle directories", dir)
	}
	slices.SortFunc(bundles, func(a, b catalogBundle) int { return strings.Compare(a.csv.Name, b.csv.Name) })

	channel := fbcChannel{Schema: "olm.channel", Name: catalogChannel, Package: catalogPackage}
	for _, b := range bundles {
		channel.Entries = append(channel.Entries, fbcChannelEntry{Name: b.csv.Name, Replaces: b.csv.Spec.Replaces})
	}
	docs := []any{fbcPackage{Schema: "olm.package", Name: catalogPackage, DefaultChannel: catalogChannel}, channel}
	for _, b := range bundles {
		properties := []fbcProperty{{Type: "olm.package", Value: map[string]string{"packageName": catalogPackage, "version": b.csv.Spec.Version.String()}}}
		for _, owned := range b.csv.Spec.CustomResourceDefinitions.Owned {
			_, group, _ := strings.Cut(owned.Name, ".")
			properties = append(properties, fbcProperty{Type: "olm.gvk", Value: map[string]string{"group": group, "kind": owned.Kind, "version": owned.Version}})
		}
		for _, obj := range b.objects {
			// encoding/json writes a []byte as base64, as olm.bundle.object wants it.
			properties = append(properties, fbcProperty{Type: "olm.bundle.object", Value: map[string][]byte{"data": obj}})
		}
		// No image: the manifests are embedded, so OLM needs no unpack Job.
		docs = append(docs, fbcBundle{Schema: "olm.bundle", Name: b.csv.Name, Package: catalogPackage, Properties: properties})
	}

	var out bytes.Buffer
	for _, doc := range docs {
		data, err := json.MarshalIndent(doc, "", "    ")
		if err != nil {
			return nil, err
		}
		out.Write(data)
		out.WriteString("\n")
	}
	return out.Bytes(), nil
}

// readBundle reads a bundle directory: its manifests, one of them the CSV.
func readBundle(dir string) (catalogBundle, error) {
	var b catalogBundle
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return b, err
	}
	slices.Sort(files)
	found := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return b, err
		}
		obj, err := yaml.YAMLToJSON(data)
		if err != nil {
			return b, fmt.Errorf("%s: %w", f, err)
		}
		b.objects = append(b.objects, obj)
		var kind struct{ Kind string }
		if err := json.Unmarshal(obj, &kind); err != nil {
			return b, fmt.Errorf("%s: %w", f, err)
		}
		if kind.Kind != operatorsv1alpha1.ClusterServiceVersionKind {
			continue
		}
		if found {
			return b, fmt.Errorf("%s: a second ClusterServiceVersion in the bundle", f)
		}
		found = true
		if err := yaml.UnmarshalStrict(data, &b.csv); err != nil {
			return b, fmt.Errorf("%s: %w", f, err)
		}
	}
	if !found {
		return b, fmt.Errorf("%s: no ClusterServiceVersion", dir)
	}
	return b, nil
}
