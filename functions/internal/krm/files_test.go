package krm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFilesDependOneWay holds the package to the layout doc.go states: where a
// file uses an unexported name another file declares, that file uses none of
// the first one's (marshal.go uses plain.go, never the other way round).
func TestFilesDependOneWay(t *testing.T) {
	uses := fileUses(t)
	for file, others := range uses {
		for _, other := range others {
			if slices.Contains(uses[other], file) {
				t.Errorf("%s and %s use each other's unexported names", file, other)
			}
		}
	}
	// The package's first tangle, which the split undid.
	if !slices.Contains(uses["marshal.go"], "plain.go") || !slices.Contains(uses["decode.go"], "marshal.go") {
		t.Errorf("the test no longer sees the uses it is meant to check: %v", uses)
	}
}

// fileUses maps each non-test file of the package to the files whose
// unexported top-level names it uses.
func fileUses(t *testing.T) map[string][]string {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	declaredIn := map[string]string{} // unexported top-level name -> its file
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = f
		for name := range f.Scope.Objects {
			if !ast.IsExported(name) {
				declaredIn[name] = path
			}
		}
	}
	uses := map[string][]string{}
	for path, f := range files {
		// A name declared in another file of the package is left unresolved
		// by the parser, which resolves only within a file.
		for _, ident := range f.Unresolved {
			if other, ok := declaredIn[ident.Name]; ok && other != path && !slices.Contains(uses[path], other) {
				uses[path] = append(uses[path], other)
			}
		}
	}
	return uses
}
