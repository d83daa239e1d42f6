package krm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// canonical is a ResourceList as kustomize and kpt encode one (two-space indent,
// compact sequences), with the things a careless round trip loses: comments of
// every kind, unsorted items and keys, quoting styles, flow collections, block
// scalars, anchors and the orchestrators' annotations. (A folded scalar is
// written on one line, as that encoder writes it.)
const canonical = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- # head comment of the first item
  kind: Zebra
  apiVersion: example.com/v1
  metadata:
    name: z # line comment
    annotations:
      internal.config.kubernetes.io/path: 'zebra.yaml'
      internal.config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'zebra.yaml'
      kustomize.config.k8s.io/id: |
        kind: Zebra
        name: z
  spec:
    single: 'quoted'
    double: "quoted"
    plain: yes
    number: 010
    flow: {b: 1, a: [x, y]}
    literal: |
      keep
        this
    folded: >-
      folded text
    anchor: &shared
      k: v
    alias: *shared
    # comment before a key
    last: ~
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
  data: {}
`

func identity(*fn.ResourceList) error { return nil }

func TestRunPassesItemsThroughByteForByte(t *testing.T) {
	f := Function{Name: "identity", Process: identity}
	t.Run("without functionConfig the whole list is unchanged", func(t *testing.T) {
		var out, stderr bytes.Buffer
		if code := f.Run(strings.NewReader(canonical), &out, &stderr); code != 0 {
			t.Fatalf("exit code %d, stderr %s", code, stderr.String())
		}
		if out.String() != canonical {
			t.Errorf("output differs from input:\n--- got\n%s\n--- want\n%s", out.String(), canonical)
		}
		if stderr.Len() != 0 {
			t.Errorf("unexpected stderr: %s", stderr.String())
		}
	})
	t.Run("the functionConfig is not echoed", func(t *testing.T) {
		in := canonical + "functionConfig:\n  apiVersion: fn.fleetpolicy.io/v1alpha1\n  kind: Identity\n  metadata:\n    name: x\n"
		var out bytes.Buffer
		f.Run(strings.NewReader(in), &out, &bytes.Buffer{})
		if out.String() != canonical {
			t.Errorf("output differs from input without its functionConfig:\n--- got\n%s\n--- want\n%s", out.String(), canonical)
		}
	})
}

func TestRunResultsAndExitCode(t *testing.T) {
	item := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
    namespace: ns
    annotations:
      internal.config.kubernetes.io/path: cm.yaml
      internal.config.kubernetes.io/index: '2'
`
	report := func(sev fn.Severity) func(rl *fn.ResourceList) error {
		return func(rl *fn.ResourceList) error {
			rl.Results = append(rl.Results, ObjectResult(rl.Items[0], sev, "data.key", "something about it"))
			return nil
		}
	}
	cases := []struct {
		name        string
		input       string
		process     func(rl *fn.ResourceList) error
		wantCode    int
		wantStderr  string
		wantResults string // the tail of stdout from "results:", "" for none
	}{
		{name: "an error result fails the run", input: item, process: report(fn.Error), wantCode: 1,
			wantStderr: "fn: error: ConfigMap ns/cm (cm.yaml) data.key: something about it\n",
			wantResults: `results:
- message: something about it
  severity: error
  resourceRef:
    apiVersion: v1
    kind: ConfigMap
    name: cm
    namespace: ns
  field:
    path: data.key
  file:
    path: cm.yaml
    index: 2
`},
		{name: "a warning is shown but passes", input: item, process: report(fn.Warning), wantCode: 0,
			wantStderr: "fn: warning: ConfigMap ns/cm (cm.yaml) data.key: something about it\n"},
		{name: "an info result is not shown", input: item, process: report(fn.Info), wantCode: 0},
		{name: "a returned error becomes an error result", input: item,
			process:  func(*fn.ResourceList) error { return errors.New("config is wrong") },
			wantCode: 1, wantStderr: "fn: error: config is wrong\n",
			wantResults: "results:\n- message: config is wrong\n  severity: error\n"},
		{name: "input that is not YAML", input: "items: [", process: identity, wantCode: 1,
			wantStderr: "fn: error: reading the ResourceList on stdin: failed to parse ResourceList as a single KubeObject: failed to parse input bytes: yaml: line 1: did not find expected node content\n"},
		{name: "input of another kind", input: "apiVersion: v1\nkind: List\nitems: []\n", process: identity, wantCode: 1,
			wantStderr: "fn: error: reading the ResourceList on stdin: input was of unexpected kind \"List\"; expected ResourceList\n"},
		{name: "empty input is an empty list", input: "", process: identity, wantCode: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			code := Function{Name: "fn", Process: tc.process}.Run(strings.NewReader(tc.input), &out, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d", code, tc.wantCode)
			}
			if stderr.String() != tc.wantStderr {
				t.Errorf("stderr:\n got  %q\n want %q", stderr.String(), tc.wantStderr)
			}
			if _, err := fn.ParseResourceList(out.Bytes()); err != nil {
				t.Errorf("stdout is not a ResourceList: %v\n%s", err, out.String())
			}
			if tc.wantResults != "" && !strings.HasSuffix(out.String(), "\n"+tc.wantResults) {
				t.Errorf("stdout does not end with the results:\n%s\n--- want tail\n%s", out.String(), tc.wantResults)
			}
		})
	}
}

func TestMainArguments(t *testing.T) {
	warnOnFlag := func(rl *fn.ResourceList) error {
		rl.Results = append(rl.Results, &fn.Result{Severity: fn.Warning, Message: "flagged"})
		return nil
	}
	f := Function{Name: "fn", Help: "usage: fn < resourcelist.yaml\n", Process: identity,
		Flags: map[string]func(*fn.ResourceList) error{"--flag": warnOnFlag}}
	cases := []struct {
		name                 string
		args                 []string
		wantCode             int
		wantStdout, wantErrs string
	}{
		{"--help prints the help", []string{"--help"}, 0, "usage: fn < resourcelist.yaml\n", ""},
		{"-h prints the help", []string{"-h"}, 0, "usage: fn < resourcelist.yaml\n", ""},
		{"--version prints the name and version", []string{"--version"}, 0, "fn " + Version + "\n", ""},
		{"other arguments are refused", []string{"config.yaml"}, 2, "",
			"fn: unexpected arguments [\"config.yaml\"]: the function reads a ResourceList on stdin (see --help)\n"},
		{"no arguments reads stdin", nil, 0, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n", ""},
		{"a flag runs its Process", []string{"--flag"}, 0,
			"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- message: flagged\n  severity: warning\n", "fn: warning: flagged\n"},
		{"a flag with other arguments is refused", []string{"--flag", "x"}, 2, "",
			"fn: unexpected arguments [\"--flag\" \"x\"]: the function reads a ResourceList on stdin (see --help)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			code := f.main(tc.args, strings.NewReader(""), &out, &stderr)
			if code != tc.wantCode || out.String() != tc.wantStdout || stderr.String() != tc.wantErrs {
				t.Errorf("got (%d, %q, %q), want (%d, %q, %q)", code, out.String(), stderr.String(), tc.wantCode, tc.wantStdout, tc.wantErrs)
			}
		})
	}
}

// TestRunRefusesInputOverTheLimit feeds Run a stream of zeros a byte longer
// than the limit: it is refused with an error result and exit code 1, before
// it is read whole; an input of exactly the limit is read.
func TestRunRefusesInputOverTheLimit(t *testing.T) {
	f := Function{Name: "f", Process: func(*fn.ResourceList) error { return nil }}
	limit := int64(len(canonical))
	var stdout, stderr bytes.Buffer
	if code := f.run(io.LimitReader(zeros{}, limit+1), &stdout, &stderr, limit); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	want := fmt.Sprintf("f: error: reading the ResourceList on stdin: larger than the limit of %d bytes", limit)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := f.run(strings.NewReader(canonical), &stdout, &stderr, limit); code != 0 {
		t.Errorf("input of the limit's size: exit code %d:\n%s", code, stderr.String())
	}
}

// zeros is an endless stream of zero bytes, as /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
