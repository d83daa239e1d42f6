package krm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// Reads lists the kinds whose items Process reads; nil means every kind.
	// An item of another kind that holds a YAML alias (which the kpt SDK's
	// accessors cannot read) is kept from Process and passed through as it
	// came, in its place.
	Reads []schema.GroupKind
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

// MaxResourceListBytes bounds the ResourceList a function reads on stdin
// (512 MiB, some 10,000 objects of 50 KiB): a larger input, or one without
// end, is refused with an error result before it is read whole.
const MaxResourceListBytes = 512 << 20

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

// ReadAtMost reads r to its end, or fails when it holds more than limit bytes
// (reading limit+1 of them at most): every file and stream a function reads is
// bounded so.
func ReadAtMost(r io.Reader, limit int64) ([]byte, error) {
	in, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(in)) > limit {
		err = fmt.Errorf("larger than the limit of %d bytes", limit)
	}
	return in, err
}

// entriesPerDocument is how many items and results writeResourceList encodes
// as one YAML document, at least.
const entriesPerDocument = 100

// writeResourceList writes rl as a config.kubernetes.io/v1 ResourceList whose
// items are the items' own YAML nodes, in order, followed by the results.
// Scalars the encoder would write with another value are given a style it
// writes faithfully (see restyleScalarsTheEncoderGetsWrong).
//
// The YAML encoder keeps every event of a document until the document ends, so
// a list of 10,000 items encoded as one document holds and copies, as that
// buffer grows, several gigabytes. The entries of the list (items, then
// results) are therefore encoded in batches of at least batchSize, each as a
// document of its own whose first line, the key of the list it continues, is
// dropped. A batch ends only after an entry without foot comments: a foot
// comment is the one thing the encoder carries from an entry to the next, so the
// output is byte for byte that of the whole list encoded as one document.
//
// Batches are independent, so runtime.GOMAXPROCS(0) of them at a time are
// encoded side by side (the encoder only reads the nodes) and then written in
// order: only that many encoded batches are held at once.
func writeResourceList(w io.Writer, rl *fn.ResourceList, batchSize int) error {
	entries := make([]listEntry, 0, len(rl.Items)+len(rl.Results))
	for _, item := range rl.Items {
		node := Node(item)
		restyleScalarsTheEncoderGetsWrong(node)
		entries = append(entries, listEntry{"items", node})
	}
	for _, r := range rl.Results {
		node, err := resultNode(r)
		if err != nil {
			return err
		}
		entries = append(entries, listEntry{"results", node})
	}
	var bounds []int // the first entry of each batch, then len(entries)
	for start := 0; ; {
		bounds = append(bounds, start)
		end := min(start+batchSize, len(entries))
		for end < len(entries) && hasFootComment(entries[end-1].node) {
			end++
		}
		if end == len(entries) {
			bounds = append(bounds, end)
			break
		}
		start = end
	}
	batches := len(bounds) - 1
	window := make([][]byte, min(runtime.GOMAXPROCS(0), batches))
	errs := make([]error, len(window))
	for first := 0; first < batches; first += len(window) {
		n := min(len(window), batches-first)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				b := first + i
				window[i], errs[i] = encodeBatch(rl, entries, bounds[b], bounds[b+1])
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				return errs[i]
			}
			if _, err := w.Write(window[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// listEntry is an entry of the items or the results list of a ResourceList.
type listEntry struct {
	key  string
	node *yaml.Node
}

// encodeBatch encodes entries[start:end] as writeResourceList writes them: the
// first batch starts the ResourceList, a batch that continues the list of the
// batch before it goes without that list's key, and the last ends the stream.
func encodeBatch(rl *fn.ResourceList, entries []listEntry, start, end int) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	if start == 0 {
		doc.Content = append(doc.Content,
			keyNode("apiVersion"), yaml.NewStringRNode(kio.ResourceListAPIVersion).YNode(),
			keyNode("kind"), yaml.NewStringRNode(kio.ResourceListKind).YNode())
		if len(rl.Items) == 0 {
			doc.Content = append(doc.Content, keyNode("items"), &yaml.Node{Kind: yaml.SequenceNode})
		}
	}
	for _, e := range entries[start:end] {
		if n := len(doc.Content); n == 0 || doc.Content[n-2].Value != e.key {
			doc.Content = append(doc.Content, keyNode(e.key), &yaml.Node{Kind: yaml.SequenceNode})
		}
		list := doc.Content[len(doc.Content)-1]
		list.Content = append(list.Content, e.node)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if end == len(entries) {
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	out := buf.Bytes()
	if start > 0 && entries[start-1].key == entries[start].key {
		var found bool
		if out, found = bytes.CutPrefix(out, []byte(entries[start].key+":\n")); !found {
			return nil, fmt.Errorf("encoding the %s from entry %d: the document does not start with their key", entries[start].key, start)
		}
	}
	return out, nil
}

// Node returns the YAML node of obj itself, not a copy (the SDK's
// CopyToResourceNode copies, MoveToResourceNode empties obj): reading it costs
// nothing, and a change to it is a change to obj.
func Node(obj *fn.KubeObject) *yaml.Node {
	rn := obj.MoveToResourceNode()
	node := rn.YNode()
	*obj = *fn.MoveToKubeObject(rn)
	return node
}

// hasFootComment reports whether n or a node under it has a foot comment.
func hasFootComment(n *yaml.Node) bool {
	if n.FootComment != "" {
		return true
	}
	for _, c := range n.Content {
		if hasFootComment(c) {
			return true
		}
	}
	return false
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
