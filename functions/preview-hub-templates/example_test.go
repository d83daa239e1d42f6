package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestExample runs the commands of examples/templates/preview/README.md (and
// of this function's README) with the real kpt on a copy of the example:
// `kpt fn eval <dir> --exec <function> -o unwrap` prints each cluster's
// replica and changes nothing; without -o it writes one file per cluster.
func TestExample(t *testing.T) {
	kpt := krmtest.Kpt(t)
	bin := krmtest.BuildFunction(t, "preview-hub-templates")
	example := filepath.Join(krmtest.RepoRoot(t), "examples", "templates", "preview")
	dir := t.TempDir()
	files := krmtest.ReadDir(t, example)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out := run(t, kpt, "fn", "eval", dir, "--exec", bin, "-o", "unwrap")
	for _, want := range []string{
		"name: policies.site-network\n  namespace: site-0001",
		"name: policies.site-network\n  namespace: site-0002",
		"region: eu-west", "vlan: 3620", "region: us-east", "vlan: 3621",
		".dockerconfigjson: $ocm_encrypted:<redacted>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the preview does not show %q:\n%s", want, out)
		}
	}
	if after := krmtest.ReadDir(t, dir); !reflect.DeepEqual(after, files) {
		t.Errorf("kpt fn eval -o unwrap changed the example: %v", after)
	}

	run(t, kpt, "fn", "eval", dir, "--exec", bin)
	for _, cluster := range []string{"site-0001", "site-0002"} {
		b, err := os.ReadFile(filepath.Join(dir, previewDir, cluster, "policies.site-network.yaml"))
		if err != nil {
			t.Fatalf("the preview of %s: %v", cluster, err)
		}
		if !strings.Contains(string(b), "namespace: "+cluster) {
			t.Errorf("the preview of %s is not its replica:\n%s", cluster, b)
		}
	}
}

func run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), tool, args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return string(out)
}
