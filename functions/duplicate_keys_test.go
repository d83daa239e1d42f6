package functions_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestFunctionRefusesDuplicateItems runs a function's binary on a ResourceList
// with items: twice: it exits 1 saying so, rather than dropping the first
// items and passing.
func TestFunctionRefusesDuplicateItems(t *testing.T) {
	binary := krmtest.BuildFunction(t, "validate-dependencies")
	cmd := exec.CommandContext(t.Context(), binary)
	cmd.Stdin = strings.NewReader(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata: {name: a, namespace: n}
  spec: {dependencies: [{apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: missing, compliance: Compliant}]}
items: []
`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("%v, want exit code 1:\n%s", err, stderr.String())
	}
	if want := `validate-dependencies: error: reading the ResourceList on stdin: key "items" is given twice (lines 3 and 8)`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
}
