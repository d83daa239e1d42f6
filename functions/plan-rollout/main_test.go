package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

func TestGolden(t *testing.T) {
	krmtest.RunGolden(t, "testdata", planRollout)
}

// TestInputPassesThroughByteForByte checks that every item that is not a
// RolloutPlan comes out exactly as it went in, comments, field order and quoting
// included, and in the same order.
func TestInputPassesThroughByteForByte(t *testing.T) {
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			out, _, _ := c.Run(t, planRollout)
			want := withoutPlans(itemChunks(t, c.ResourceList(t)))
			got := withoutPlans(itemChunks(t, out))
			if strings.Join(got, "") != strings.Join(want, "") {
				t.Errorf("items changed:\n--- got\n%s\n--- want\n%s", strings.Join(got, ""), strings.Join(want, ""))
			}
		})
	}
}

// TestIdempotent checks that running the function on its own output changes
// nothing: plans are replaced, not duplicated, and the results are the same
// (but for the plans the first run removed).
func TestIdempotent(t *testing.T) {
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			first, _, code := c.Run(t, planRollout)
			if code != 0 {
				t.Skip("the case fails: nothing is written")
			}
			again := c
			again.Items = []byte(strings.Join(itemDocuments(t, first), "---\n"))
			second, _, _ := again.Run(t, planRollout)
			if !bytes.Equal(krmtest.ItemsSection(t, second), krmtest.ItemsSection(t, first)) {
				t.Errorf("the second run changed the items:\n--- second\n%s\n--- first\n%s", krmtest.ItemsSection(t, second), krmtest.ItemsSection(t, first))
			}
			if got, want := resultMessages(t, second), strings.Join(removedLines.Split(resultMessages(t, first), -1), ""); got != want {
				t.Errorf("the second run's results differ:\n--- second\n%s\n--- first\n%s", got, want)
			}
		})
	}
}

// itemChunks splits the items section of a ResourceList into the text of each
// item.
func itemChunks(t *testing.T, rl []byte) []string {
	t.Helper()
	var chunks []string
	for _, line := range strings.SplitAfter(string(krmtest.ItemsSection(t, rl)), "\n") {
		if strings.HasPrefix(line, "- ") || len(chunks) == 0 {
			chunks = append(chunks, "")
		}
		chunks[len(chunks)-1] += line
	}
	return chunks
}

func withoutPlans(chunks []string) []string {
	var out []string
	for _, c := range chunks {
		if !strings.Contains(c, "\n  kind: RolloutPlan\n") {
			out = append(out, c)
		}
	}
	return out
}

// itemDocuments returns the items of a ResourceList as YAML documents, as they
// would be stored in a package.
func itemDocuments(t *testing.T, rl []byte) []string {
	t.Helper()
	list, err := fn.ParseResourceList(rl)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, item := range list.Items {
		docs = append(docs, item.String())
	}
	return docs
}

// removedLines match the results about plans a run removed.
var removedLines = regexp.MustCompile(`(?m)^info: removed: .*\n`)

// resultMessages lists the results of a ResourceList, one per line.
func resultMessages(t *testing.T, rl []byte) string {
	t.Helper()
	list, err := fn.ParseResourceList(rl)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range list.Results {
		b.WriteString(string(r.Severity) + ": " + r.Message + "\n")
	}
	return b.String()
}
