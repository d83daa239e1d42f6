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
			in := itemsSection(t, c.ResourceList(t))
			if got := itemsSection(t, out); !bytes.Equal(got, in) {
				t.Errorf("items changed:\n--- got\n%s\n--- want\n%s", got, in)
			}
		})
	}
}

// itemsSection returns the lines of a ResourceList from "items:" to the next
// top-level field.
func itemsSection(t *testing.T, rl []byte) []byte {
	t.Helper()
	start := bytes.Index(rl, []byte("\nitems:\n"))
	if start < 0 {
		t.Fatalf("no items in:\n%s", rl)
	}
	section := rl[start+1:]
	for i := bytes.IndexByte(section, '\n'); i >= 0 && i+1 < len(section); {
		if c := section[i+1]; c != ' ' && c != '-' && c != '#' {
			return section[:i+1]
		}
		next := bytes.IndexByte(section[i+1:], '\n')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return section
}
