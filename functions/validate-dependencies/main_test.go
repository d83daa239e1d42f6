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
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			out, _, _ := c.Run(t, validateDependencies)
			in := krmtest.ItemsSection(t, c.ResourceList(t))
			if got := krmtest.ItemsSection(t, out); !bytes.Equal(got, in) {
				t.Errorf("items changed:\n--- got\n%s\n--- want\n%s", got, in)
			}
		})
	}
}
