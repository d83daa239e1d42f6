package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

func TestGolden(t *testing.T) {
	krmtest.RunGolden(t, "testdata", expandOperatorPolicy)
}

// TestExampleCases checks that the example-* cases run the example package
// of examples/operator-policy, so that its golden output is proven.
func TestExampleCases(t *testing.T) {
	example := filepath.Join(krmtest.RepoRoot(t), "examples", "operator-policy")
	for dir, files := range map[string]map[string]string{
		"example-olm":    {"input.yaml": "operator-policies.yaml", "config.yaml": "olm.yaml"},
		"example-policy": {"input.yaml": "operator-policies.yaml", "config.yaml": "policy.yaml"},
	} {
		for caseFile, exampleFile := range files {
			got, err := os.ReadFile(filepath.Join("testdata", dir, caseFile))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(example, exampleFile))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("testdata/%s/%s differs from examples/operator-policy/%s: copy it over", dir, caseFile, exampleFile)
			}
		}
	}
}

// TestOtherItemsPassThroughByteForByte checks that every item the function
// does not own comes out exactly as it came in (comments, field order and
// quoting included), in the same order.
func TestOtherItemsPassThroughByteForByte(t *testing.T) {
	krmtest.EachCase(t, expandOperatorPolicy, func(t *testing.T, _ krmtest.Case, in, out []byte, _ int) {
		checkOthersKept(t, krmtest.Parse(t, in).Items, krmtest.Parse(t, out).Items)
	})
}

// checkOthersKept fails t unless the items of out that in does not own are
// those of in, byte for byte and in order. Which items are owned, and which
// output items are the input's, is decided here (isOwned, identity), not by
// the function's own rule, so that a function that took more than it owns
// fails.
func checkOthersKept(t testing.TB, in, out fn.KubeObjects) {
	t.Helper()
	var want []string
	others := map[string]bool{}
	for _, item := range in {
		if !isOwned(item) {
			want = append(want, item.String())
			others[identity(item)] = true
		}
	}
	var kept []string
	for _, item := range out {
		if others[identity(item)] {
			kept = append(kept, item.String())
		}
	}
	if !slices.Equal(kept, want) {
		t.Fatalf("items the function does not own changed:\n--- got\n%v\n--- want\n%v", kept, want)
	}
}

// TestIdempotent runs the function on its own output: nothing changes and no
// error or warning is reported.
func TestIdempotent(t *testing.T) {
	for _, c := range krmtest.Cases(t, "testdata") {
		first, _, code := c.Run(t, expandOperatorPolicy)
		if code != 0 { // the case fails by design: there is no output to run on
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			second := runAgain(t, krmtest.Parse(t, first), krmtest.Parse(t, c.ResourceList(t)).FunctionConfig)
			if len(second.Results) != 0 {
				t.Errorf("second run reported %v", second.Results)
			}
		})
	}
}

// runAgain runs the function on the output of a passing run, with
// functionConfig and without the results: the run must pass and give back
// the same items. It returns the second output.
func runAgain(t testing.TB, out *fn.ResourceList, functionConfig *fn.KubeObject) *fn.ResourceList {
	t.Helper()
	out.FunctionConfig, out.Results = functionConfig, nil
	input, err := out.ToYAML()
	if err != nil {
		t.Fatal(err)
	}
	second, code := krmtest.RunParsed(t, expandOperatorPolicy, input)
	if code != 0 {
		t.Fatalf("the second run failed: %v", second.Results)
	}
	if !slices.Equal(krmtest.ItemStrings(second.Items), krmtest.ItemStrings(out.Items)) {
		t.Fatalf("the second run changed the items:\n--- got\n%v\n--- want\n%v", krmtest.ItemStrings(second.Items), krmtest.ItemStrings(out.Items))
	}
	return second
}

// isOwned is what the function's README says it owns: every OperatorPolicy
// that is not local-config.
func isOwned(item *fn.KubeObject) bool {
	return item.GetAPIVersion() == "policy.open-cluster-management.io/v1beta1" && item.GetKind() == "OperatorPolicy" &&
		!item.IsLocalConfig()
}

// identity is an item's apiVersion, kind, namespace and name.
func identity(item *fn.KubeObject) string {
	return strings.Join([]string{item.GetAPIVersion(), item.GetKind(), item.GetNamespace(), item.GetName()}, "/")
}
