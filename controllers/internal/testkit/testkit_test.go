package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinariesLinkNoTestCode lists what the controllers' binaries link: not
// the testing package, nor any package of this test kit (olmfake among them).
func TestBinariesLinkNoTestCode(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: runs go list")
	}
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "./cmd/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const kit = "github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" || pkg == kit || strings.HasPrefix(pkg, kit+"/") {
			t.Errorf("a binary of controllers/cmd links %s", pkg)
		}
	}
}
