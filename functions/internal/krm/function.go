package krm

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Version is the version of every function of this repository (they are
// released together); catalog.yaml lists it. Builds may set it with
// -ldflags "-X github.com/fleetpolicy/fleetpolicy/functions/internal/krm.Version=...".
var Version = "v0.1.0"

// Function is one KRM function of this repository.
type Function struct {
	// Name is the binary's name; it prefixes every line written to stderr.
	Name string
	// Help is printed by --help.
	Help string
	// Process reads rl.Items and rl.FunctionConfig, may change, add or remove
	// the items it owns, and appends its findings to rl.Results. An error it
	// returns becomes an error result: use it for failures that concern no
	// particular object.
	Process func(rl *fn.ResourceList) error
	// Reads lists the kinds whose items Process reads; nil means every kind.
	// An item of another kind that holds a YAML alias (which the kpt SDK's
	// accessors cannot read) is kept from Process and passed through as it
	// came, in its place.
	Reads []schema.GroupKind
	// Flags are the arguments the function takes besides --help and
	// --version, each with the Process it runs instead of Process when given
	// (alone) on the command line, e.g. check-placement's --explain.
	Flags map[string]func(rl *fn.ResourceList) error
}

// WithFlag is f as it runs when given flag, one of f.Flags: the flag's
// Process in place of Process. It panics when f has no such flag.
func (f Function) WithFlag(flag string) Function {
	process, ok := f.Flags[flag]
	if !ok {
		panic(fmt.Sprintf("%s has no flag %s", f.Name, flag))
	}
	f.Process = process
	return f
}

// Main runs the function as the program: it reads stdin, writes stdout and
// stderr, and exits with Run's exit code. --help prints Help, --version the name
// and Version, one of Flags runs the function with that flag's Process; any
// other argument is refused with exit code 2. A function's main is this one
// call.
func (f Function) Main() {
	os.Exit(f.main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func (f Function) main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		return f.Run(stdin, stdout, stderr)
	case len(args) == 1 && (args[0] == "--help" || args[0] == "-h"):
		_, _ = io.WriteString(stdout, f.Help)
		return 0
	case len(args) == 1 && args[0] == "--version":
		_, _ = fmt.Fprintf(stdout, "%s %s\n", f.Name, Version)
		return 0
	case len(args) == 1 && f.Flags[args[0]] != nil:
		return f.WithFlag(args[0]).Run(stdin, stdout, stderr)
	default:
		_, _ = fmt.Fprintf(stderr, "%s: unexpected arguments %q: the function reads a ResourceList on stdin (see --help)\n", f.Name, args)
		return 2
	}
}

// Run processes the ResourceList read from stdin, writes the resulting
// ResourceList to stdout and the error and warning results to stderr, and
// returns the exit code: 1 when any result is an error, 0 otherwise.
//
// A key given twice at the top level of the ResourceList or of its
// functionConfig makes the input unreadable: the YAML parser would keep the
// last one silently.
//
// An item of a kind the function does not read (Reads) passes through even
// when it holds a YAML alias. A panic of Process (the kpt SDK's accessors
// panic on an item holding a YAML alias where they read) is an error result:
// the items are written as they came in, with an error naming each item of a
// kind the function reads that holds an alias, and the alias's field.
func (f Function) Run(stdin io.Reader, stdout, stderr io.Writer) int {
	return f.run(stdin, stdout, stderr, MaxResourceListBytes)
}

// run is Run reading at most limit bytes of stdin.
func (f Function) run(stdin io.Reader, stdout, stderr io.Writer, limit int64) int {
	in, err := ReadAtMost(stdin, limit)
	var rl *fn.ResourceList
	if err == nil {
		rl, err = ParseResourceList(in)
	}
	if err != nil {
		rl = &fn.ResourceList{Results: fn.Results{fn.ErrorResult(fmt.Errorf("reading the ResourceList on stdin: %w", err))}}
	} else if err := f.processPassingThrough(rl); err != nil {
		var panicked *processPanic
		if errors.As(err, &panicked) {
			rl = f.failedList(in, panicked)
		} else {
			rl.Results = append(rl.Results, fn.ErrorResult(err))
		}
	}
	if err := writeResourceList(stdout, rl, entriesPerDocument); err != nil {
		rl.Results = append(rl.Results, fn.ErrorResult(fmt.Errorf("writing the ResourceList on stdout: %w", err)))
	}
	for _, r := range rl.Results {
		if r.Severity == fn.Error || r.Severity == fn.Warning {
			_, _ = fmt.Fprintf(stderr, "%s: %s\n", f.Name, FormatResult(r))
		}
	}
	if rl.Results.ExitCode() != 0 {
		return 1
	}
	return 0
}
