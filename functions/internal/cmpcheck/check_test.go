package cmpcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func function(path, extra string) string {
	return "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + path + "\n" + extra
}

// TestCheck covers the refusals that need no kustomize run: the real-path
// comparison, and what the checker cannot read.
func TestCheck(t *testing.T) {
	bin := t.TempDir()
	allowed := filepath.Join(bin, "validate-dependencies")
	if err := os.WriteFile(allowed, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		files     map[string]string
		wantError string // "" when allowed
	}{
		{"allowed by absolute path", map[string]string{
			"kustomization.yaml": "transformers:\n- fn.yaml\n",
			"fn.yaml":            function(allowed, ""),
		}, ""},
		{"no kustomization", map[string]string{"a.yaml": "x: 1\n"}, ""},
		{"builtin transformer", map[string]string{
			"kustomization.yaml": "transformers:\n- prefix.yaml\n",
			"prefix.yaml":        "apiVersion: builtin\nkind: PrefixTransformer\nmetadata:\n  name: p\nprefix: x-\nfieldSpecs:\n- path: metadata/name\n",
		}, ""},
		{"cycle of bases", map[string]string{
			"kustomization.yaml":   "resources:\n- a\n",
			"a/kustomization.yaml": "resources:\n- ..\n",
		}, ""},
		{"exec envs", map[string]string{
			"kustomization.yaml": "transformers:\n- fn.yaml\n",
			"fn.yaml":            function(allowed, "        envs: [LD_PRELOAD=./x.so]\n"),
		}, "envs"},
		{"remote resource", map[string]string{
			"kustomization.yaml": "resources:\n- https://github.com/example/repo//base?ref=v1\n",
		}, `"https://github.com/example/repo//base?ref=v1" is not a local file or directory`},
		{"directory of transformers", map[string]string{
			"kustomization.yaml":     "transformers:\n- fns\n",
			"fns/kustomization.yaml": "resources: []\n",
		}, `transformers: "fns" is a directory`},
		{"legacy container annotation", map[string]string{
			"kustomization.yaml": "generators:\n- fn.yaml\n",
			"fn.yaml":            "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/container: example.com/fn\n",
		}, `container function "example.com/fn"`},
		{"metadata.configFn", map[string]string{
			"kustomization.yaml": "validators:\n- fn.yaml\n",
			"fn.yaml":            "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  configFn:\n    exec:\n      path: /bin/sh\n",
		}, `exec path "/bin/sh"`},
		{"path relative to the listing kustomization", map[string]string{
			"kustomization.yaml":        "resources:\n- sub\n",
			"sub/kustomization.yaml":    "transformers:\n- fn.yaml\n",
			"sub/fn.yaml":               function("./validate-dependencies", ""),
			"validate-dependencies":     "not the installed one",
			"sub/validate-dependencies": "nor this",
		}, `exec path "./validate-dependencies"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				path := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Check(dir, []string{allowed})
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var refusal *Refusal
			if !errors.As(err, &refusal) {
				t.Fatalf("error %v, want a refusal saying %q", err, tc.wantError)
			}
			if !strings.Contains(refusal.Error(), tc.wantError) {
				t.Errorf("refusal %q does not say %q", refusal, tc.wantError)
			}
		})
	}
}
