package krmtest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

// RunParsed runs f on input and returns its output ResourceList and exit code,
// failing t unless the exit code is 0 or 1 and the output is a ResourceList,
// and when f panicked on anything but a YAML alias (Run answers that with an
// internal error).
func RunParsed(t testing.TB, f krm.Function, input []byte) (*fn.ResourceList, int) {
	t.Helper()
	var out, stderr bytes.Buffer
	code := f.Run(bytes.NewReader(input), &out, &stderr)
	if code != 0 && code != 1 {
		t.Fatalf("exit code %d", code)
	}
	if strings.Contains(stderr.String(), krm.InternalError) {
		t.Fatalf("%s", stderr.String())
	}
	rl, err := fn.ParseResourceList(out.Bytes())
	if err != nil {
		t.Fatalf("output is not a ResourceList: %v\n%s", err, out.String())
	}
	return rl, code
}

// Parse parses a ResourceList, failing t when it is not one.
func Parse(t testing.TB, resourceList []byte) *fn.ResourceList {
	t.Helper()
	rl, err := fn.ParseResourceList(resourceList)
	if err != nil {
		t.Fatalf("not a ResourceList: %v\n%s", err, resourceList)
	}
	return rl
}

// ItemStrings are items as YAML documents, as they would be stored in a
// package.
func ItemStrings(items fn.KubeObjects) []string {
	s := make([]string, len(items))
	for i, item := range items {
		s[i] = item.String()
	}
	return s
}

// FuzzRun is the part every function's fuzz target shares: f runs on input
// (RunParsed's checks), and input that is not a ResourceList must fail. It
// returns the input and output ResourceLists and the exit code; ok is false
// when the input is unreadable and there is nothing more to check.
func FuzzRun(t testing.TB, f krm.Function, input []byte) (in, out *fn.ResourceList, code int, ok bool) {
	t.Helper()
	out, code = RunParsed(t, f, input)
	in, err := krm.ParseResourceList(input)
	if err != nil {
		if code != 1 {
			t.Fatalf("unreadable input passed: %v", err)
		}
		return nil, out, code, false
	}
	return in, out, code, true
}

// AddSeeds adds to f's seed corpus the ResourceList of every golden case
// under testdata but those skip reports (skip may be nil), AliasedItems, a
// ResourceList whose items are no objects, and extra.
func AddSeeds(f *testing.F, skip func(Case) bool, extra ...string) {
	f.Helper()
	for _, c := range Cases(f, "testdata") {
		if skip == nil || !skip(c) {
			f.Add(c.ResourceList(f))
		}
	}
	f.Add([]byte(AliasedItems))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 1\n- [a]\n"))
	for _, seed := range extra {
		f.Add([]byte(seed))
	}
}

// CheckPassedThrough fails t unless the items of out that written reports
// false for (written may be nil: none) are those of in, byte for byte and in
// order: the items a function does not write pass through it unchanged.
func CheckPassedThrough(t testing.TB, in, out fn.KubeObjects, written func(*fn.KubeObject) bool) {
	t.Helper()
	var kept, want []string
	for _, item := range out {
		if written == nil || !written(item) {
			kept = append(kept, item.String())
		}
	}
	for _, item := range in {
		if written == nil || !written(item) {
			want = append(want, item.String())
		}
	}
	if len(kept) != len(want) {
		t.Fatalf("%d items in, %d out", len(want), len(kept))
	}
	for i := range want {
		if kept[i] != want[i] {
			t.Fatalf("item %d changed:\n--- got\n%s\n--- want\n%s", i, kept[i], want[i])
		}
	}
}

// ItemsSection returns the lines of a ResourceList after "items:" up to the
// next top-level field: the items as written, comments and quoting included.
func ItemsSection(t testing.TB, rl []byte) []byte {
	t.Helper()
	start := bytes.Index(rl, []byte("\nitems:\n"))
	if start < 0 {
		t.Fatalf("no items in:\n%s", rl)
	}
	section := rl[start+len("\nitems:\n"):]
	n := 0
	for _, line := range bytes.SplitAfter(section, []byte("\n")) {
		if len(line) > 0 && line[0] != ' ' && line[0] != '-' && line[0] != '#' {
			break
		}
		n += len(line)
	}
	return section[:n]
}

// AliasedItems is a ResourceList whose items (a Policy, an OperatorPolicy, a
// ConfigMap) hold YAML aliases where every function reads (metadata,
// annotations, labels): the kpt SDK's accessors panic on aliases.
const AliasedItems = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata: &m
    name: a
    namespace: n
    annotations: &a
      x: y
  spec:
    disabled: false
    policy-templates: []
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata: *m
  spec: {}
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata:
    name: b
    namespace: n
    annotations: *a
    labels: *a
  spec: {}
- apiVersion: policy.open-cluster-management.io/v1beta1
  kind: OperatorPolicy
  metadata:
    name: o
    namespace: n
    labels: *a
  spec: {}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
    labels: *a
`
