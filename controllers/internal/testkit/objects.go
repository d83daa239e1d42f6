package testkit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

// Apply applies (localplane.Apply) the objects of the YAML stream doc, named
// after the test in errors, and fails the test on error.
func Apply(t testing.TB, c client.Client, doc string) {
	t.Helper()
	if err := TryApply(t, c, doc); err != nil {
		t.Fatal(err)
	}
}

// TryApply is Apply that returns the API server's error (an admission
// webhook's refusal, say) instead of failing the test; a doc that is not YAML
// fails the test.
func TryApply(t testing.TB, c client.Client, doc string) error {
	t.Helper()
	objs, err := localplane.ReadManifests(t.Name(), strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = localplane.Apply(context.Background(), c, objs)
	return err
}

// ApplyObjects applies objs and fails the test on error.
func ApplyObjects(t testing.TB, c client.Client, objs ...*unstructured.Unstructured) {
	t.Helper()
	if _, err := localplane.Apply(context.Background(), c, objs); err != nil {
		t.Fatal(err)
	}
}

// ApplyFile applies the manifests of a file named relative to the repository
// root, and fails the test on error.
func ApplyFile(t testing.TB, c client.Client, rel string) {
	t.Helper()
	objs, err := localplane.ReadManifestFile(filepath.Join(RepoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	ApplyObjects(t, c, objs...)
}

// Get reads obj by namespace and name and fails the test on error.
func Get(t testing.TB, c client.Client, namespace, name string, obj client.Object) {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
}

// RootStatus is the status of the Policy namespace/name (a root policy on a
// hub), failing the test when it cannot be read.
func RootStatus(t testing.TB, c client.Client, namespace, name string) policyv1.PolicyStatus {
	t.Helper()
	p := &policyv1.Policy{}
	Get(t, c, namespace, name, p)
	return p.Status
}

// WaitOperatorPolicy waits up to timeout for the status of the OperatorPolicy
// namespace/name, of its current generation, to pass check (answer ""), and
// returns the OperatorPolicy as it last read it. The test fails with check's
// last answer, and the status as describe gives it when describe is not nil,
// when timeout passes first.
func WaitOperatorPolicy(t testing.TB, c client.Client, namespace, name string, timeout time.Duration, what string,
	check func(*v1beta1.OperatorPolicy) string, describe func(*v1beta1.OperatorPolicy) string) *v1beta1.OperatorPolicy {
	t.Helper()
	op := &v1beta1.OperatorPolicy{}
	Eventually(t, timeout, fmt.Sprintf("OperatorPolicy %s/%s: %s", namespace, name, what), func() string {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, op); err != nil {
			return err.Error()
		}
		if op.Status.ObservedGeneration != op.Generation {
			return fmt.Sprintf("observedGeneration %d, generation %d", op.Status.ObservedGeneration, op.Generation)
		}
		problem := check(op)
		if problem != "" && describe != nil {
			problem += "\nstatus: " + describe(op)
		}
		return problem
	})
	return op
}

// RepoRoot is the repository root (localplane.RepoRoot), failing the test
// when it is not found.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := localplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// KustomizeBuild renders the kustomization at rel (relative to the repository
// root) with the repository's kustomize (bin/kustomize, built by `make tools`)
// and fails the test when it cannot.
func KustomizeBuild(t testing.TB, rel string) []byte {
	t.Helper()
	root := RepoRoot(t)
	bin := filepath.Join(root, "bin", "kustomize")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s missing: run `make tools`", bin)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "build", filepath.Join(root, rel))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", rel, err, stderr.String())
	}
	return out
}
