package crdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

var hub *localplane.Plane

func TestMain(m *testing.M) {
	os.Exit(testkit.RunWithPlane(m, "hub", nil, func(_ context.Context, p *localplane.Plane) error {
		hub = p
		return nil
	}))
}

// TestExamplesRoundTrip applies every manifest under examples/ (which include
// every resource snippet of examples/api, one file per design) to a real API
// server, reads each object back, and fails if the server pruned or changed any
// field that was written. It then decodes the stored object into fleetpolicy's Go
// types and encodes it again, failing if the Go types lose a field: the
// controllers read these objects through those types.
func TestExamplesRoundTrip(t *testing.T) {
	root := testkit.RepoRoot(t)
	files, err := localplane.ManifestFiles(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no manifests under examples/")
	}
	patches, err := kustomizePatches(files)
	if err != nil {
		t.Fatal(err)
	}
	s := scheme.New()
	ctx := context.Background()
	applied := 0
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		if patches[file] {
			continue // a kustomize patch is a fragment, not an object
		}
		t.Run(rel, func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			objs, err := localplane.ReadManifests(rel, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range localplane.APIObjects(objs) {
				name := want.GetKind() + " " + client.ObjectKeyFromObject(want).String()
				if _, err := localplane.Apply(ctx, hub.Client, []*unstructured.Unstructured{want}); err != nil {
					t.Errorf("%s: refused: %v", name, err)
					continue
				}
				applied++
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(want.GroupVersionKind())
				if err := hub.Client.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
					t.Errorf("%s: reading back: %v", name, err)
					continue
				}
				for _, diff := range subsetDiff("", comparable(want.Object), got.Object, false) {
					t.Errorf("%s: API server %s", name, diff)
				}
				typedRoundTrip(t, s, name, want, got)
			}
		})
	}
	if applied == 0 {
		t.Fatal("no API objects applied")
	}
}

// kustomizePatches returns the files that a kustomization.yaml among files uses
// as a patch.
func kustomizePatches(files []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var k struct {
			Patches []struct {
				Path string `json:"path"`
			} `json:"patches"`
			PatchesStrategicMerge []string `json:"patchesStrategicMerge"`
		}
		if err := yaml.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, p := range k.Patches {
			if p.Path != "" {
				out[filepath.Join(filepath.Dir(f), p.Path)] = true
			}
		}
		for _, p := range k.PatchesStrategicMerge {
			out[filepath.Join(filepath.Dir(f), p)] = true
		}
	}
	return out, nil
}

// typedRoundTrip decodes got into the Go type the scheme has for its kind,
// encodes it again and checks that nothing of want was lost on the way.
func typedRoundTrip(t *testing.T, s *runtime.Scheme, name string, want, got *unstructured.Unstructured) {
	t.Helper()
	typed, err := s.New(got.GroupVersionKind())
	if err != nil {
		return // a kind fleetpolicy does not read through Go types
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, typed); err != nil {
		t.Errorf("%s: decoding into %T: %v", name, typed, err)
		return
	}
	raw, err := json.Marshal(typed)
	if err != nil {
		t.Errorf("%s: encoding %T: %v", name, typed, err)
		return
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	for _, diff := range subsetDiff("", comparable(want.Object), back, true) {
		t.Errorf("%s: Go type %T %s", name, typed, diff)
	}
}

// comparable drops what the server owns or may set: metadata other than name,
// namespace, labels and annotations.
func comparable(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		keep := map[string]any{}
		for _, k := range []string{"name", "namespace", "labels", "annotations"} {
			if v, ok := md[k]; ok {
				keep[k] = v
			}
		}
		out["metadata"] = keep
	}
	return out
}

// subsetDiff lists every field of want that got lacks or holds differently.
// Fields got adds (server defaults) are allowed. With semantic set (for Go
// types), a zero value that got omits and a duration got spells differently
// ("5m" as "5m0s") are the same.
func subsetDiff(path string, want, got any, semantic bool) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("changed %s: want an object, got %v", orRoot(path), got)}
		}
		var diffs []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				if !semantic || !isZero(wv) {
					diffs = append(diffs, fmt.Sprintf("pruned %s.%s", path, k))
				}
				continue
			}
			diffs = append(diffs, subsetDiff(path+"."+k, wv, gv, semantic)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("changed %s: want %v, got %v", orRoot(path), want, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], semantic)...)
		}
		return diffs
	default:
		if !scalarEqual(want, got) && !(semantic && sameDuration(want, got)) {
			return []string{fmt.Sprintf("changed %s: want %v, got %v", orRoot(path), want, got)}
		}
		return nil
	}
}

// scalarEqual compares JSON scalars, treating all numbers by value.
func scalarEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func orRoot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

func isZero(v any) bool {
	switch z := v.(type) {
	case nil:
		return true
	case bool:
		return !z
	case string:
		return z == ""
	case map[string]any:
		return len(z) == 0
	case []any:
		return len(z) == 0
	}
	f, ok := number(v)
	return ok && f == 0
}

func sameDuration(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if !aok || !bok {
		return false
	}
	ad, aerr := time.ParseDuration(as)
	bd, berr := time.ParseDuration(bs)
	return aerr == nil && berr == nil && ad == bd
}
