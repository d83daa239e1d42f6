package krmtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf and Skipf instead of stopping.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.fatal = fmt.Sprintf(format, a...) }
func (r *recorder) Skipf(format string, a ...any)  { r.skip = fmt.Sprintf(format, a...) }

func TestMissingToolFailsOnlyUnderCI(t *testing.T) {
	cases := []struct {
		ci                  string
		wantFatal, wantSkip bool
	}{
		{ci: "true", wantFatal: true},
		{ci: "", wantSkip: true},
		{ci: "false", wantSkip: true},
	}
	for _, tc := range cases {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			missingTool(r, "kpt", "kpt is not on PATH")
			if (r.fatal != "") != tc.wantFatal || (r.skip != "") != tc.wantSkip {
				t.Fatalf("fatal %q, skip %q; want fatal %v, skip %v", r.fatal, r.skip, tc.wantFatal, tc.wantSkip)
			}
			if msg := r.fatal + r.skip; !strings.Contains(msg, "kpt is not on PATH") {
				t.Errorf("the message %q does not say why", msg)
			}
		})
	}
}

func TestRepoRootHoldsGoWork(t *testing.T) {
	if _, err := os.Stat(filepath.Join(RepoRoot(t), "go.work")); err != nil {
		t.Fatal(err)
	}
}

func TestCasesSkipTheFuzzCorpus(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a-case", "fuzz/FuzzSomething"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	items := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x # kept\n"
	if err := os.WriteFile(filepath.Join(dir, "a-case", "input.yaml"), []byte(items), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := Cases(t, dir)
	if len(cases) != 1 || cases[0].Name != "a-case" || cases[0].Config != nil {
		t.Fatalf("Cases = %+v, want only a-case, without config", cases)
	}
	want := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x # kept\n"
	if got := string(cases[0].ResourceList(t)); got != want {
		t.Errorf("ResourceList:\n%s\nwant\n%s", got, want)
	}
}
