// Command fleetpolicy-cmp-generate is the generate command of fleetpolicy's
// Argo CD config management plugin (examples/argocd/plugin.yaml). In the
// Application's path it first checks, with package cmpcheck, that every KRM
// function the app's kustomizations name is one of fleetpolicy's functions
// installed beside this command; it refuses the app otherwise (a message on
// stderr naming the file and the path, exit 1) without running anything. Then
// it runs `kustomize build --enable-alpha-plugins --enable-exec .` (kustomize
// from PATH) with its own stdin, stdout and stderr, and exits with its code.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/cmpcheck"
)

// functions are fleetpolicy's KRM functions (functions/*/main.go), installed
// in the same directory as this command.
var functions = []string{"check-placement", "expand-operator-policy", "plan-rollout", "preview-hub-templates", "validate-dependencies"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleetpolicy plugin:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 1 {
		return errors.New("fleetpolicy-cmp-generate takes no arguments")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return err
	}
	allowed := make([]string, len(functions))
	for i, name := range functions {
		allowed[i] = filepath.Join(filepath.Dir(self), name)
	}
	if err := cmpcheck.Check(".", allowed); err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	cmd := exec.Command("kustomize", "build", "--enable-alpha-plugins", "--enable-exec", ".")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		os.Exit(exitErr.ExitCode())
	}
	return err
}
