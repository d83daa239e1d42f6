package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

func TestGolden(t *testing.T) {
	krmtest.RunGolden(t, "testdata", checkPlacement)
}

// TestOnlyGovernedItemsChange checks every golden case: an item the function
// does not own comes out byte for byte as it went in, and a governed item (a
// root Policy or a Placement) differs only by the annotations it was given.
func TestOnlyGovernedItemsChange(t *testing.T) {
	krmtest.EachCase(t, checkPlacement, func(t *testing.T, _ krmtest.Case, input, out []byte, _ int) {
		got, in := krmtest.Parse(t, out), krmtest.Parse(t, input)
		if len(got.Items) != len(in.Items) {
			t.Fatalf("%d items out, %d in", len(got.Items), len(in.Items))
		}
		for i, item := range got.Items {
			// Both sides without the annotations that differ must be equal.
			before, after := in.Items[i].GetAnnotations(), item.GetAnnotations()
			restored, original := item.Copy(), in.Items[i].Copy()
			changed := false
			set, removed := krm.ChangedKeys(before, after)
			for _, k := range append(set, removed...) {
				changed = true
				if err := restored.RemoveAnnotation(k); err != nil {
					t.Fatal(err)
				}
				if err := original.RemoveAnnotation(k); err != nil {
					t.Fatal(err)
				}
			}
			for _, obj := range []*fn.KubeObject{restored, original} {
				if len(obj.GetAnnotations()) == 0 {
					if _, err := obj.RemoveNestedField("metadata", "annotations"); err != nil {
						t.Fatal(err)
					}
				}
			}
			if changed && !isGoverned(in.Items[i]) {
				t.Errorf("item %d (%s %s) is not governed but was changed", i, item.GetKind(), item.GetName())
			}
			if restored.String() != original.String() {
				t.Errorf("item %d changed beyond its annotations:\n--- got\n%s\n--- want\n%s", i, item.String(), in.Items[i].String())
			}
		}
	})
}

// TestExplainChangesNothing runs every case with explain: the items come out
// as they went in, every governed resource gets an info result per cluster of
// the inventory, and the errors are those of the run without explain.
func TestExplainChangesNothing(t *testing.T) {
	explain := checkPlacement.WithFlag(explainFlag)
	krmtest.EachCase(t, explain, func(t *testing.T, c krmtest.Case, input, out []byte, code int) {
		got, in := krmtest.Parse(t, out), krmtest.Parse(t, input)
		for i, item := range got.Items {
			if item.String() != in.Items[i].String() {
				t.Errorf("item %d changed:\n--- got\n%s\n--- want\n%s", i, item.String(), in.Items[i].String())
			}
		}
		wantErrors := c.ErrorMessages(t)
		var gotErrors []string
		for _, r := range got.Results {
			if r.Severity == fn.Error {
				gotErrors = append(gotErrors, r.Message)
			}
		}
		if !reflect.DeepEqual(gotErrors, wantErrors) || code != c.ExpectedResults(t).ExitCode() {
			t.Errorf("errors %q (exit %d), want %q", gotErrors, code, wantErrors)
		}
	})
}

// TestAliasedItemsAreDecidedInTurn checks that an item that aliases a node of
// an item before it (YAML anchors reach across the items of a ResourceList) is
// decided after that item's annotations were applied, as when every item was
// decided and applied in turn: p-2 reads the annotations p-1 was given.
func TestAliasedItemsAreDecidedInTurn(t *testing.T) {
	input := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: mark
    namespace: fleetpolicy-placement
    labels: {fleetpolicy.io/placement-policy: rego}
  data:
    mark.rego: |
      package fleetpolicy.placement
      annotations["example.io/mark"] := "set"
      annotations["example.io/copied-mark"] := object.get(input, ["spec", "copied", "annotations", "example.io/mark"], "none")
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata: &p1
    name: p-1
    namespace: apps
  spec: {disabled: false}
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata:
    name: p-2
    namespace: apps
  spec: {disabled: false, copied: *p1}
`
	rl, code := krmtest.RunParsed(t, checkPlacement, []byte(input))
	if code != 0 {
		t.Fatalf("exit code %d, results %v", code, rl.Results)
	}
	got := map[string]string{}
	for _, item := range rl.Items[1:] {
		got[item.GetName()] = item.GetAnnotation("example.io/copied-mark")
	}
	if want := map[string]string{"p-1": "none", "p-2": "set"}; !reflect.DeepEqual(got, want) {
		t.Errorf("example.io/copied-mark by Policy: %v, want %v", got, want)
	}
}

// TestFilesOverTheLimitAreRefused gives the function a policies or clusters
// file without end (/dev/zero) and one a byte over maxFileBytes: each is
// refused with an error naming the config's field, before it is read whole.
func TestFilesOverTheLimitAreRefused(t *testing.T) {
	overLimit := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(overLimit)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileBytes + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, path string }{
		{"policies", "/dev/zero"},
		{"clusters", "/dev/zero"},
		{"policies", overLimit},
		{"clusters", overLimit},
	} {
		t.Run(c.field+" "+c.path, func(t *testing.T) {
			input := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n" +
				"  apiVersion: fn.fleetpolicy.io/v1alpha1\n  kind: CheckPlacement\n  metadata:\n    name: c\n" +
				"  " + c.field + ":\n  - " + c.path + "\n"
			var stdout, stderr bytes.Buffer
			if code := checkPlacement.Run(strings.NewReader(input), &stdout, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			want := fmt.Sprintf(`check-placement: error: functionConfig CheckPlacement "c": %s[0]: %s: larger than the limit of %d bytes`,
				c.field, c.path, maxFileBytes)
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			if !strings.Contains(stdout.String(), "severity: error") {
				t.Errorf("no error result:\n%s", stdout.String())
			}
		})
	}
}
