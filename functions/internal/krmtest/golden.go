package krmtest

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/*/expected.yaml) from the actual output")

// Case is one golden case: a directory under testdata.
type Case struct {
	Name string
	Dir  string
	// Items is input.yaml; Config is config.yaml, nil when the case has none.
	Items, Config []byte
}

// Cases reads the cases under dir, in directory order; dir/fuzz, the fuzz
// corpus of go test, is not a case.
func Cases(t testing.TB, dir string) []Case {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading golden cases: %v", err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "fuzz" { // testdata/fuzz holds go test's fuzz corpus
			continue
		}
		c := Case{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
		c.Items = mustRead(t, filepath.Join(c.Dir, "input.yaml"))
		config, err := os.ReadFile(filepath.Join(c.Dir, "config.yaml"))
		switch {
		case err == nil:
			c.Config = config
		case !errors.Is(err, os.ErrNotExist):
			t.Fatalf("case %s: %v", c.Name, err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatalf("no golden cases under %s", dir)
	}
	return cases
}

// ResourceList is the case's input as an orchestrator would send it: the items
// of input.yaml and the functionConfig of config.yaml.
func (c Case) ResourceList(t testing.TB) []byte {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(c.Items), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("case %s: input.yaml: %v", c.Name, err)
	}
	w := kio.ByteWriter{WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind}
	if c.Config != nil {
		if w.FunctionConfig, err = yaml.Parse(string(c.Config)); err != nil {
			t.Fatalf("case %s: config.yaml: %v", c.Name, err)
		}
	}
	var out bytes.Buffer
	w.Writer = &out
	if err := w.Write(items); err != nil {
		t.Fatalf("case %s: %v", c.Name, err)
	}
	return out.Bytes()
}

// Expected is expected.yaml, the whole output ResourceList.
func (c Case) Expected(t testing.TB) []byte {
	t.Helper()
	return mustRead(t, filepath.Join(c.Dir, "expected.yaml"))
}

// ExpectedResults are the results of expected.yaml.
func (c Case) ExpectedResults(t testing.TB) fn.Results {
	t.Helper()
	rl, err := fn.ParseResourceList(c.Expected(t))
	if err != nil {
		t.Fatalf("case %s: expected.yaml: %v", c.Name, err)
	}
	return rl.Results
}

// Run runs f in-process on the case's ResourceList and returns its stdout, its
// stderr and its exit code.
func (c Case) Run(t testing.TB, f krm.Function) (stdout, stderr []byte, exitCode int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := f.Run(bytes.NewReader(c.ResourceList(t)), &out, &errOut)
	return out.Bytes(), errOut.Bytes(), code
}

// RunGolden runs f on every case under dir, as a subtest per case, and compares
// the output ResourceList with expected.yaml byte for byte; the exit code must
// be 1 exactly when an expected result is an error. With -update it rewrites
// expected.yaml instead of comparing.
func RunGolden(t *testing.T, dir string, f krm.Function) {
	t.Helper()
	for _, c := range Cases(t, dir) {
		t.Run(c.Name, func(t *testing.T) {
			got, stderr, code := c.Run(t, f)
			path := filepath.Join(c.Dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := c.Expected(t); !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (rerun with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
			if wantCode := c.ExpectedResults(t).ExitCode(); code != wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, wantCode, stderr)
			}
		})
	}
}

// EachCase runs f in process on every golden case under testdata, a subtest
// each, and calls check with the case, the ResourceList f got, its output
// and its exit code.
func EachCase(t *testing.T, f krm.Function, check func(t *testing.T, c Case, in, out []byte, code int)) {
	t.Helper()
	for _, c := range Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			out, _, code := c.Run(t, f)
			check(t, c, c.ResourceList(t), out, code)
		})
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
