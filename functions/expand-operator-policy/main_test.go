package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			in := parse(t, c.ResourceList(t))
			out, _, _ := c.Run(t, expandOperatorPolicy)
			got := parse(t, out)
			var want []string
			for _, item := range in.Items {
				if !isOwned(item) {
					want = append(want, item.String())
				}
			}
			others := newPackage(in.Items).others
			var kept []string
			for _, item := range got.Items {
				if _, found := others[idOf(item)]; found {
					kept = append(kept, item.String())
				}
			}
			if !slices.Equal(kept, want) {
				t.Errorf("items the function does not own changed:\n--- got\n%v\n--- want\n%v", kept, want)
			}
		})
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
			rl := parse(t, first)
			rl.FunctionConfig, rl.Results = parse(t, c.ResourceList(t)).FunctionConfig, nil
			input, err := rl.ToYAML()
			if err != nil {
				t.Fatal(err)
			}
			var second bytes.Buffer
			if code := expandOperatorPolicy.Run(bytes.NewReader(input), &second, &bytes.Buffer{}); code != 0 {
				t.Fatalf("second run failed:\n%s", second.String())
			}
			again := parse(t, second.Bytes())
			if len(again.Results) != 0 {
				t.Errorf("second run reported %v", again.Results)
			}
			if !slices.Equal(itemStrings(again.Items), itemStrings(rl.Items)) {
				t.Errorf("second run changed the items:\n--- got\n%v\n--- want\n%v", itemStrings(again.Items), itemStrings(rl.Items))
			}
		})
	}
}

func isOwned(item *fn.KubeObject) bool {
	for _, owned := range newPackage(fn.KubeObjects{item}).owned {
		if owned == item {
			return true
		}
	}
	return false
}

func parse(t *testing.T, resourceList []byte) *fn.ResourceList {
	t.Helper()
	rl, err := fn.ParseResourceList(resourceList)
	if err != nil {
		t.Fatalf("not a ResourceList: %v\n%s", err, resourceList)
	}
	return rl
}

func itemStrings(items fn.KubeObjects) []string {
	s := make([]string, len(items))
	for i, item := range items {
		s[i] = item.String()
	}
	return s
}
