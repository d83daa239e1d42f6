package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
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

func TestRunRefusesOtherArguments(t *testing.T) {
	for _, args := range [][]string{{"generate"}, {"init", "x"}, {"discover", "."}, {"--help"}} {
		err := run(args)
		if err == nil || !strings.Contains(err.Error(), "usage: fleetpolicy-cmp-generate [init|discover]") {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestInitDecision(t *testing.T) {
	patch := func(action string) []string {
		return []string{"edit", "add", "patch", "--group", "policy.open-cluster-management.io", "--version", "v1", "--kind", "Policy",
			"--patch", `[{"op": "add", "path": "/spec/remediationAction", "value": "` + action + `"}]`}
	}
	// What Argo CD always sends besides the parameters.
	request := []string{"PATH=/usr/local/bin", "HOME=/home/argocd", "ARGOCD_APP_NAME=payments", "KUBE_VERSION=1.35.4",
		`ARGOCD_APP_PARAMETERS=[{"name":"overlay","string":"prod"}]`}
	cases := []struct {
		name      string
		env       []string
		wantEdit  []string
		wantError string
	}{
		{name: "no parameter keeps the repository", env: nil},
		{name: "empty keeps the repository", env: []string{"PARAM_REMEDIATION_ACTION="}},
		{name: "inform", env: []string{"PARAM_REMEDIATION_ACTION=inform"}, wantEdit: patch("inform")},
		{name: "Inform", env: []string{"PARAM_REMEDIATION_ACTION=Inform"}, wantEdit: patch("Inform")},
		{name: "enforce", env: []string{"PARAM_REMEDIATION_ACTION=enforce"}, wantEdit: patch("enforce")},
		{name: "Enforce", env: []string{"PARAM_REMEDIATION_ACTION=Enforce"}, wantEdit: patch("Enforce")},
		{name: "another case", env: []string{"PARAM_REMEDIATION_ACTION=ENFORCE"},
			wantError: `parameter remediation-action: "ENFORCE" is neither inform nor enforce`},
		{name: "surrounding space", env: []string{"PARAM_REMEDIATION_ACTION= inform"},
			wantError: `parameter remediation-action: " inform" is neither inform nor enforce`},
		{name: "JSON injection is quoted as given", env: []string{`PARAM_REMEDIATION_ACTION=inform"}, {"op": "remove", "path": "/spec`},
			wantError: `parameter remediation-action: "inform"}, {"op": "remove", "path": "/spec" is neither inform nor enforce`},
		{name: "a newline in the value", env: []string{"PARAM_REMEDIATION_ACTION=inform\nPARAM_X=1"},
			wantError: "parameter remediation-action: \"inform\nPARAM_X=1\" is neither inform nor enforce"},
		{name: "unknown parameter", env: []string{"PARAM_OVERLAY=prod"},
			wantError: "unknown parameter PARAM_OVERLAY - the only parameter is remediation-action, a string"},
		{name: "unknown parameter, even empty", env: []string{"PARAM_OVERLAY="},
			wantError: "unknown parameter PARAM_OVERLAY - the only"},
		{name: "unknown parameters in the environment's order, before the value is checked",
			env:       []string{"PARAM_Z=1", "PARAM_REMEDIATION_ACTION=delete", "PARAM_A_0=x", "PARAM_=y"},
			wantError: "unknown parameter PARAM_Z PARAM_A_0 PARAM_ - the only"},
		{name: "array instead of string", env: []string{"PARAM_REMEDIATION_ACTION_0=inform"},
			wantError: "unknown parameter PARAM_REMEDIATION_ACTION_0 - the only"},
		{name: "map instead of string", env: []string{"PARAM_REMEDIATION_ACTION_ALL=inform", "PARAM_REMEDIATION_ACTION_SOME=enforce"},
			wantError: "unknown parameter PARAM_REMEDIATION_ACTION_ALL PARAM_REMEDIATION_ACTION_SOME - the only"},
		{name: "plugin env is not a parameter", env: []string{"ARGOCD_ENV_PARAM_OVERLAY=prod", "ARGOCD_ENV_REMEDIATION_ACTION=delete",
			"PARAM_REMEDIATION_ACTION=enforce"}, wantEdit: patch("enforce")},
		{name: "names Argo CD never makes are not parameters", env: []string{"PARAM_lower=1", "PARAM_A-B=2", "XPARAM_A=3"}},
		{name: "the first of two values, as getenv", env: []string{"PARAM_REMEDIATION_ACTION=inform", "PARAM_REMEDIATION_ACTION=enforce"},
			wantEdit: patch("inform")},
		{name: "an entry without =", env: []string{"PARAM_OVERLAY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edit, err := initDecision(append(slices.Clone(request), tc.env...))
			if tc.wantError != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantError) {
					t.Errorf("error %v, want %q", err, tc.wantError)
				}
				if edit != nil {
					t.Errorf("a refused request edits the kustomization: %q", edit)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(edit, tc.wantEdit) {
				t.Errorf("kustomize %q, want %q", edit, tc.wantEdit)
			}
		})
	}
}

// TestInitPatchIsJSON: the patch init adds parses as the JSON patch it means.
func TestInitPatchIsJSON(t *testing.T) {
	for _, action := range remediationActions {
		edit, err := initDecision([]string{"PARAM_REMEDIATION_ACTION=" + action})
		if err != nil {
			t.Fatal(err)
		}
		var ops []map[string]string
		if err := json.Unmarshal([]byte(edit[len(edit)-1]), &ops); err != nil {
			t.Fatalf("%s: %v", action, err)
		}
		want := []map[string]string{{"op": "add", "path": "/spec/remediationAction", "value": action}}
		if !reflect.DeepEqual(ops, want) {
			t.Errorf("patch %v, want %v", ops, want)
		}
	}
}

func TestLineMatcher(t *testing.T) {
	cases := []struct {
		content string
		want    bool
	}{
		{"apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: ValidateDependencies\n", true},
		{"kind: PlanRollout\napiVersion: fn.fleetpolicy.io/v1alpha1\n", true},
		{"apiVersion:fn.fleetpolicy.io/v1alpha1", true},
		{"apiVersion:      fn.fleetpolicy.io/", true},
		{"apiVersion: fn.fleetpolicy.io/v1alpha1\r\n", true},
		{"---\napiVersion: v1\n---\napiVersion: fn.fleetpolicy.io/v1alpha1\n", true},
		{"data: x\napiVersion: fn.fleetpolicy.io/v1alpha1", true}, // no final newline
		{"", false},
		{"apiVersion: v1\nkind: ConfigMap\ndata:\n  note: not fn.fleetpolicy.io/v1alpha1\n", false},
		{"  apiVersion: fn.fleetpolicy.io/v1alpha1\n", false}, // indented: not at the start of the line
		{"- apiVersion: fn.fleetpolicy.io/v1alpha1\n", false},
		{"apiVersion:\tfn.fleetpolicy.io/v1alpha1\n", false}, // spaces only, as ' *'
		{"apiVersion: \"fn.fleetpolicy.io/v1alpha1\"\n", false},
		{"apiVersion: fn.fleetpolicy.io\n", false},
		{"apiVersion: fnXfleetpolicy.io/v1\n", false},
		{"apiVersion: fn.fleetpolicy.iO/v1\n", false},
		{"apiversion: fn.fleetpolicy.io/v1\n", false},
		{"apiVersion:\nfn.fleetpolicy.io/v1\n", false},
		{"xapiVersion: fn.fleetpolicy.io/v1\n", false},
		{"apiVersion: apiVersion: fn.fleetpolicy.io/v1\n", false},
		{"apiVersion: fn.fleetpolicy.apiVersion: fn.fleetpolicy.io/\n", false},
		{"# apiVersion: fn.fleetpolicy.io/v1\n", false},
		{strings.Repeat("x", 100<<10) + "\napiVersion: fn.fleetpolicy.io/v1\n", true},
		{"apiVersion:" + strings.Repeat(" ", 100<<10) + "fn.fleetpolicy.io/v1\n", true},
		{"apiVersion:" + strings.Repeat(" ", 100<<10) + "\n", false},
	}
	for _, tc := range cases {
		name := tc.content
		if len(name) > 60 {
			name = name[:60] + "..."
		}
		// Whole, and fed one byte at a time: a match across any boundary.
		var whole lineMatcher
		if got := whole.feed([]byte(tc.content)); got != tc.want {
			t.Errorf("%q: %v, want %v", name, got, tc.want)
		}
		var bytewise lineMatcher
		got := false
		for i := 0; i < len(tc.content) && !got; i++ {
			got = bytewise.feed([]byte{tc.content[i]})
		}
		if got != tc.want {
			t.Errorf("%q fed byte by byte: %v, want %v", name, got, tc.want)
		}
	}
}

// discoverTree writes files (path -> content) under a new directory.
func discoverTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const fnConfig = "apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: ValidateDependencies\nmetadata:\n  name: v\n"

// TestDiscover: what discover prints for a tree, and, where the machine has
// grep, that it is exactly what the discovery rule it replaces printed.
func TestDiscover(t *testing.T) {
	outside := discoverTree(t, map[string]string{"fn.yaml": fnConfig, "dir/fn.yaml": fnConfig})
	cases := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, root string)
		want  []string
	}{
		{name: "empty directory"},
		{name: "plain kustomize app", files: map[string]string{
			"kustomization.yaml": "resources:\n- configmap.yaml\n",
			"configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  note: not fn.fleetpolicy.io/v1alpha1\n",
		}},
		{name: "function config beside the kustomization", files: map[string]string{
			"kustomization.yaml":         "transformers:\n- validate-dependencies.yaml\n",
			"validate-dependencies.yaml": fnConfig,
		}, want: []string{"./validate-dependencies.yaml"}},
		{name: "nested and hidden directories, any file name", files: map[string]string{
			"base/policies/fn.yml": fnConfig,
			".hidden/notes.txt":    "apiVersion: fn.fleetpolicy.io/v1\n",
			"README.md":            "  apiVersion: fn.fleetpolicy.io/v1alpha1\n",
		}, want: []string{"./.hidden/notes.txt", "./base/policies/fn.yml"}},
		{name: "a file without read permission is skipped", files: map[string]string{"a.yaml": fnConfig, "b.yaml": fnConfig},
			setup: func(t *testing.T, root string) {
				if os.Geteuid() == 0 {
					t.Skip("root reads any file")
				}
				if err := os.Chmod(filepath.Join(root, "b.yaml"), 0); err != nil {
					t.Fatal(err)
				}
			}, want: []string{"./a.yaml"}},
		{name: "symlinks are not followed", setup: func(t *testing.T, root string) {
			for link, target := range map[string]string{"file.yaml": filepath.Join(outside, "fn.yaml"), "dir": filepath.Join(outside, "dir")} {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "a FIFO is not read", files: map[string]string{"fn.yaml": fnConfig}, setup: func(t *testing.T, root string) {
			if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
				t.Skip("no FIFO here:", err)
			}
		}, want: []string{"./fn.yaml"}},
	}
	grep, grepErr := exec.LookPath("grep")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := discoverTree(t, tc.files)
			if tc.setup != nil {
				tc.setup(t, root)
			}
			var out bytes.Buffer
			if err := discover(root, &out); err != nil {
				t.Fatal(err)
			}
			got := lines(out.String())
			if !slices.Equal(got, tc.want) {
				t.Errorf("discover printed %q, want %q", got, tc.want)
			}
			if grepErr != nil {
				t.Logf("not compared with grep: %v", grepErr)
				return
			}
			cmd := exec.CommandContext(t.Context(), grep, "-rlsE", "^apiVersion: *fn[.]fleetpolicy[.]io/", ".")
			cmd.Dir = root
			b, err := cmd.Output()
			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Fatal(err)
			}
			byGrep := lines(string(b))
			slices.Sort(byGrep)
			if !slices.Equal(got, byGrep) {
				t.Errorf("discover printed %q, the grep rule it replaces %q", got, byGrep)
			}
		})
	}
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
