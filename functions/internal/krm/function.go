package krm

import (
	"fmt"
	"io"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
}

// Main runs the function as the program: it reads stdin, writes stdout and
// stderr, and exits with Run's exit code. --help prints Help, --version the name
// and Version; any other argument is refused with exit code 2.
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
	default:
		_, _ = fmt.Fprintf(stderr, "%s: unexpected arguments %q: the function reads a ResourceList on stdin (see --help)\n", f.Name, args)
		return 2
	}
}

// Run processes the ResourceList read from stdin, writes the resulting
// ResourceList to stdout and the error and warning results to stderr, and
// returns the exit code: 1 when any result is an error, 0 otherwise.
func (f Function) Run(stdin io.Reader, stdout, stderr io.Writer) int {
	rl, err := readResourceList(stdin)
	if err != nil {
		rl = &fn.ResourceList{Results: fn.Results{fn.ErrorResult(fmt.Errorf("reading the ResourceList on stdin: %w", err))}}
	} else if err := f.Process(rl); err != nil {
		rl.Results = append(rl.Results, fn.ErrorResult(err))
	}
	if err := writeResourceList(stdout, rl); err != nil {
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

func readResourceList(r io.Reader) (*fn.ResourceList, error) {
	in, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return fn.ParseResourceList(in)
}

// writeResourceList writes rl as a config.kubernetes.io/v1 ResourceList whose
// items are the items' own YAML nodes, in order.
func writeResourceList(w io.Writer, rl *fn.ResourceList) error {
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, item := range rl.Items {
		items.Content = append(items.Content, item.CopyToResourceNode().YNode())
	}
	list := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		keyNode("apiVersion"), yaml.NewStringRNode(kio.ResourceListAPIVersion).YNode(),
		keyNode("kind"), yaml.NewStringRNode(kio.ResourceListKind).YNode(),
		keyNode("items"), items,
	}}
	if len(rl.Results) > 0 {
		results, err := yaml.Marshal(rl.Results)
		if err != nil {
			return err
		}
		node, err := yaml.Parse(string(results))
		if err != nil {
			return err
		}
		list.Content = append(list.Content, keyNode("results"), node.YNode())
	}
	enc := yaml.NewEncoder(w)
	if err := enc.Encode(list); err != nil {
		return err
	}
	return enc.Close()
}

func keyNode(key string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: key}
}

// FormatResult renders a result on one line as
// "<severity>: <Kind> <namespace>/<name> (<file>) <field>: <message>", leaving
// out the parts the result does not have.
func FormatResult(r *fn.Result) string {
	line := string(r.Severity)
	if line == "" {
		line = string(fn.Info)
	}
	line += ":"
	if ref := r.ResourceRef; ref != nil {
		line += " " + ref.Kind + " "
		if ref.Namespace != "" {
			line += ref.Namespace + "/"
		}
		line += ref.Name
	}
	if r.File != nil && r.File.Path != "" {
		line += " (" + r.File.Path + ")"
	}
	if r.Field != nil && r.Field.Path != "" {
		line += " " + r.Field.Path
	}
	if line[len(line)-1] != ':' {
		line += ":"
	}
	return line + " " + r.Message
}
