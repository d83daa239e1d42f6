package krm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// aliasedAnnotations has a second item whose annotations and labels are YAML
// aliases of the first item's annotations.
const aliasedAnnotations = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
    annotations: &a
      x: y
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
    namespace: ns
    labels: *a
    annotations:
      internal.config.kubernetes.io/path: b.yaml
      internal.config.kubernetes.io/index: '3'
  data:
    list: [1, *a]
`

func TestRunAnswersAPanicWithTheInputAndAnError(t *testing.T) {
	// Each Process changes the first item, then panics.
	setThenPanic := func(panicking func(rl *fn.ResourceList)) func(rl *fn.ResourceList) error {
		return func(rl *fn.ResourceList) error {
			if err := rl.Items[0].SetAnnotation("changed", "yes"); err != nil {
				return err
			}
			panicking(rl)
			return nil
		}
	}
	cases := []struct {
		name       string
		process    func(rl *fn.ResourceList) error
		wantStderr string
	}{
		{"the SDK on an aliased field", setThenPanic(func(rl *fn.ResourceList) { rl.Items[1].GetLabels() }),
			"fn: error: ConfigMap ns/b (b.yaml) metadata.labels: is a YAML alias (*a), which fn cannot read: write the value out in full\n"},
		{"a bug", setThenPanic(func(rl *fn.ResourceList) { panic("boom") }),
			"fn: error: ConfigMap ns/b (b.yaml) metadata.labels: is a YAML alias (*a), which fn cannot read: write the value out in full\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			if code := (Function{Name: "fn", Process: tc.process}).Run(strings.NewReader(aliasedAnnotations), &out, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr:\n got  %q\n want %q", stderr.String(), tc.wantStderr)
			}
			items, _, _ := strings.Cut(out.String(), "results:\n")
			if want := strings.TrimSuffix(aliasedAnnotations, "\n") + "\n"; items != want {
				t.Errorf("items are not the input's:\n%s\n--- want\n%s", items, want)
			}
			if !strings.Contains(out.String(), "  field:\n    path: metadata.labels\n  file:\n    path: b.yaml\n    index: 3\n") {
				t.Errorf("the result does not name the field and file:\n%s", out.String())
			}
		})
	}
	t.Run("a bug, no alias", func(t *testing.T) {
		var out, stderr bytes.Buffer
		code := Function{Name: "fn", Process: func(*fn.ResourceList) error { panic("boom") }}.Run(
			strings.NewReader("kind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"), &out, &stderr)
		if want := "fn: error: fn stopped on an internal error: boom\n"; code != 1 || stderr.String() != want {
			t.Errorf("exit code %d, stderr %q; want 1, %q", code, stderr.String(), want)
		}
		if !strings.Contains(out.String(), "metadata: {name: a}") {
			t.Errorf("the item is not written back:\n%s", out.String())
		}
	})
}

func TestFirstAlias(t *testing.T) {
	rl, err := fn.ParseResourceList([]byte(aliasedAnnotations))
	if err != nil {
		t.Fatal(err)
	}
	if field, _, found := firstAlias(Node(rl.Items[0]), ""); found {
		t.Errorf("the anchored item holds an alias at %s", field)
	}
	if field, anchor, found := firstAlias(Node(rl.Items[1]), ""); !found || field != "metadata.labels" || anchor != "a" {
		t.Errorf("first alias %q of %q (found %v), want metadata.labels of a", field, anchor, found)
	}
	metadata := mappingValue(Node(rl.Items[1]), "metadata")
	metadata.Content = metadata.Content[6:] // annotations alone: name, namespace and labels go
	if field, anchor, found := firstAlias(Node(rl.Items[1]), ""); !found || field != "data.list[1]" || anchor != "a" {
		t.Errorf("first alias %q of %q (found %v), want data.list[1] of a", field, anchor, found)
	}
}

// TestObjectResultReadsThroughAliases: a result about an item whose
// metadata, or a field of it, is an alias names the object all the same.
func TestObjectResultReadsThroughAliases(t *testing.T) {
	rl, err := fn.ParseResourceList([]byte("kind: ResourceList\nitems:\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: &m {name: a, namespace: &ns n}}\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: *m}\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: *ns}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"error: ConfigMap n/a metadata: m", "error: ConfigMap n/b metadata.namespace: m"} {
		field, _, _ := firstAlias(Node(rl.Items[i+1]), "")
		if got := FormatResult(ObjectResult(rl.Items[i+1], fn.Error, field, "m")); got != want {
			t.Errorf("item %d: %q, want %q", i+1, got, want)
		}
	}
}
