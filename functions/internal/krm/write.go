package krm

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

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
