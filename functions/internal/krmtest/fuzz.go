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
