package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

func TestGolden(t *testing.T) {
	krmtest.RunGolden(t, "testdata", planRollout)
}

// TestInputPassesThroughByteForByte checks that every item that is not a
// RolloutPlan comes out exactly as it went in, comments, field order and quoting
// included, and in the same order.
func TestInputPassesThroughByteForByte(t *testing.T) {
	krmtest.EachCase(t, planRollout, func(t *testing.T, _ krmtest.Case, in, out []byte, _ int) {
		want := strings.Join(withoutPlans(itemChunks(t, in)), "")
		if got := strings.Join(withoutPlans(itemChunks(t, out)), ""); got != want {
			t.Errorf("items changed:\n--- got\n%s\n--- want\n%s", got, want)
		}
	})
}

// TestIdempotent checks that running the function on its own output changes
// nothing: plans are replaced, not duplicated, and the results are the same
// (but for the plans the first run removed).
func TestIdempotent(t *testing.T) {
	krmtest.EachCase(t, planRollout, func(t *testing.T, c krmtest.Case, _, first []byte, code int) {
		if code != 0 {
			t.Skip("the case fails: nothing is written")
		}
		again := c
		again.Items = []byte(strings.Join(krmtest.ItemStrings(krmtest.Parse(t, first).Items), "---\n"))
		second, _, _ := again.Run(t, planRollout)
		if !bytes.Equal(krmtest.ItemsSection(t, second), krmtest.ItemsSection(t, first)) {
			t.Errorf("the second run changed the items:\n--- second\n%s\n--- first\n%s", krmtest.ItemsSection(t, second), krmtest.ItemsSection(t, first))
		}
		if got, want := resultMessages(t, second), strings.Join(removedLines.Split(resultMessages(t, first), -1), ""); got != want {
			t.Errorf("the second run's results differ:\n--- second\n%s\n--- first\n%s", got, want)
		}
	})
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

// removedLines match the results about plans a run removed.
var removedLines = regexp.MustCompile(`(?m)^info: removed: .*\n`)

// resultMessages lists the results of a ResourceList, one per line.
func resultMessages(t *testing.T, rl []byte) string {
	t.Helper()
	var b strings.Builder
	for _, r := range krmtest.Parse(t, rl).Results {
		b.WriteString(string(r.Severity) + ": " + r.Message + "\n")
	}
	return b.String()
}
