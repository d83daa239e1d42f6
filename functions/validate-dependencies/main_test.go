package main

import (
	"bytes"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

func TestGolden(t *testing.T) {
	krmtest.RunGolden(t, "testdata", validateDependencies)
}

// TestItemsPassThroughByteForByte checks that the items section of every
// output is exactly the items section of the input: comments, field order and
// quoting included.
func TestItemsPassThroughByteForByte(t *testing.T) {
	krmtest.EachCase(t, validateDependencies, func(t *testing.T, _ krmtest.Case, in, out []byte, _ int) {
		if got, want := krmtest.ItemsSection(t, out), krmtest.ItemsSection(t, in); !bytes.Equal(got, want) {
			t.Errorf("items changed:\n--- got\n%s\n--- want\n%s", got, want)
		}
	})
}
