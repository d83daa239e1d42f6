package main

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestFunctionsAreEveryKRMFunction: the allow-list names exactly the
// functions the image installs (functions/*/main.go).
func TestFunctionsAreEveryKRMFunction(t *testing.T) {
	mains, err := filepath.Glob("../../*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range mains {
		want = append(want, filepath.Base(filepath.Dir(m)))
	}
	slices.Sort(want)
	if !slices.Equal(functions, want) {
		t.Errorf("functions %v, want every functions/*/main.go: %v", functions, want)
	}
}
