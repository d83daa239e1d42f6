// Command fleetpolicy-cmp-generate holds every command of fleetpolicy's Argo
// CD config management plugin (examples/argocd/plugin.yaml), so that the
// plugin's sidecar needs nothing but this binary, fleetpolicy's KRM functions
// installed beside it and kustomize: no shell and no shell tool.
//
//	fleetpolicy-cmp-generate           generate
//	fleetpolicy-cmp-generate init      init
//	fleetpolicy-cmp-generate discover  discover's find command
//
// argocd-cmp-server runs each in the Application's path, inside the sidecar's
// private copy of the repository, with no arguments but these. A message on
// stderr starts "fleetpolicy plugin: ".
//
// generate (no argument) first checks, with package cmpcheck, that every KRM
// function the app's kustomizations name is one of fleetpolicy's functions
// installed beside this command; it refuses the app otherwise (a message
// naming the file and the path, exit 1) without running anything. Then it
// runs `kustomize build --enable-alpha-plugins --enable-exec .` (kustomize
// from PATH) with its own stdin, stdout and stderr, and exits with its code.
//
// init applies the Application's parameters (PARAM_* variables) to the copy's
// kustomization.yaml: see initDecision. Anything it prints goes to stderr.
//
// discover prints the path (./relative) of every file under the working
// directory that declares the functionConfig of a fleetpolicy function, and
// exits 0 whatever it finds: see discover.
//
// None of them reads plugin env entries (ARGOCD_ENV_*) or
// ARGOCD_APP_PARAMETERS.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/cmpcheck"
)

// functions are fleetpolicy's KRM functions (functions/*/main.go), installed
// in the same directory as this command.
var functions = []string{"check-placement", "expand-operator-policy", "plan-rollout", "preview-hub-templates", "validate-dependencies"}

// exitStatus is an error that ends the command with that exit code and no
// message of its own: kustomize's, whose stderr has said why.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

func main() {
	err := run(os.Args[1:])
	var status exitStatus
	switch {
	case err == nil:
	case errors.As(err, &status):
		os.Exit(int(status))
	default:
		fmt.Fprintln(os.Stderr, "fleetpolicy plugin:", err)
		os.Exit(1)
	}
}

const usage = "fleetpolicy-cmp-generate [init|discover]: no argument generates, init applies the parameters, discover finds fleetpolicy function configs"

func run(args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("too many arguments %q; usage: %s", args, usage)
	}
	if len(args) == 0 {
		return generate()
	}
	switch args[0] {
	case "init":
		return initApp(os.Environ())
	case "discover":
		return discover(".", os.Stdout)
	default:
		return fmt.Errorf("unknown command %q; usage: %s", args[0], usage)
	}
}

func generate() error {
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
	return kustomize(os.Stdout, "build", "--enable-alpha-plugins", "--enable-exec", ".")
}

// kustomize runs kustomize from PATH with args, this process's stdin and
// stderr, and stdout; a non-zero exit is returned as its exitStatus.
func kustomize(stdout io.Writer, args ...string) error {
	cmd := exec.Command("kustomize", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, os.Stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() > 0 {
		return exitStatus(exitErr.ExitCode())
	}
	return err // a kustomize killed by a signal: the error says which
}
