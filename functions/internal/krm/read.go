package krm

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxResourceListBytes bounds the ResourceList a function reads on stdin
// (512 MiB, some 10,000 objects of 50 KiB): a larger input, or one without
// end, is refused with an error result before it is read whole.
const MaxResourceListBytes = 512 << 20

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

// ParseResourceList is fn.ParseResourceList refusing, in addition, a key given
// twice at the top level of the list or of its functionConfig (the YAML parser
// keeps the last silently: a second items: would drop the first).
func ParseResourceList(in []byte) (*fn.ResourceList, error) {
	rl, err := fn.ParseResourceList(in)
	if err != nil {
		return nil, err
	}
	if err := duplicateKey(in, rl); err != nil {
		return nil, err
	}
	return rl, nil
}

// duplicateKey names the first key given twice at the top level of the
// ResourceList in (the second items: would silently replace the first) or of
// its functionConfig, or returns nil. The top level is read from the text's
// lines where it is in block style, as kustomize and kpt write it, which costs
// no parsing; other text is parsed again.
func duplicateKey(in []byte, rl *fn.ResourceList) error {
	keys, ok := blockTopLevelKeys(in)
	if !ok {
		node, err := yaml.Parse(string(in))
		if err != nil {
			return nil // fn.ParseResourceList read it: nothing to add
		}
		keys = mappingKeys(node.YNode())
	}
	if key := firstRepeated(keys); key != nil {
		return fmt.Errorf("key %q is given twice (lines %d and %d)", key.name, key.first, key.line)
	}
	if rl.FunctionConfig != nil && !rl.FunctionConfig.IsEmpty() {
		if key := firstRepeated(mappingKeys(Node(rl.FunctionConfig))); key != nil {
			return fmt.Errorf("functionConfig: key %q is given twice (lines %d and %d)", key.name, key.first, key.line)
		}
	}
	return nil
}

// keyAt is a mapping key and the line it is on (from 1); first is the line of
// the key's first occurrence, once firstRepeated found it repeated.
type keyAt struct {
	name        string
	line, first int
}

// firstRepeated returns the first key of keys that an earlier one repeats.
func firstRepeated(keys []keyAt) *keyAt {
	seen := make(map[string]int, len(keys))
	for _, k := range keys {
		if first, dup := seen[k.name]; dup {
			k.first = first
			return &k
		}
		seen[k.name] = k.line
	}
	return nil
}

// mappingKeys returns the keys of a mapping node (of the mapping a document
// node holds), or nothing for any other node.
func mappingKeys(n *yaml.Node) []keyAt {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	keys := make([]keyAt, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, keyAt{name: n.Content[i].Value, line: n.Content[i].Line})
	}
	return keys
}

// blockTopLevelKeys returns the keys of the top-level block mapping of the
// single YAML document in, read from its lines: a line starting in column 0
// with neither a space, a comment nor a sequence entry starts a top-level key.
// ok is false when a line holds anything else that may start at column 0
// (document markers after the first key, directives, quoted or complex keys,
// flow collections or quoted scalars that may span lines): then only a parser
// knows.
func blockTopLevelKeys(in []byte) (keys []keyAt, ok bool) {
	for lineNo := 1; len(in) > 0; lineNo++ {
		line := in
		if i := bytes.IndexByte(in, '\n'); i >= 0 {
			line, in = in[:i], in[i+1:]
		} else {
			in = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if bytes.IndexByte(line, '\r') >= 0 {
			return nil, false // a lone carriage return breaks the line for YAML
		}
		if content := bytes.TrimLeft(line, " "); len(content) == 0 || content[0] == '#' {
			continue
		}
		switch c := line[0]; {
		case (c == ' ' || c == '-') && len(keys) == 0:
			return nil, false // an indented mapping, or not a mapping
		case c == ' ':
			continue
		case bytes.Equal(line, []byte("---")) || bytes.HasPrefix(line, []byte("--- ")):
			if len(keys) > 0 {
				return nil, false
			}
			continue
		case c == '-' && (len(line) == 1 || line[1] == ' '):
			continue // an entry of a compact sequence, the value of a key
		case strings.IndexByte("\t\"'{[&*!?|>@%`.-", c) >= 0:
			return nil, false
		}
		colon := -1
		for i := 0; i < len(line) && colon < 0; i++ {
			if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ') {
				colon = i
			}
		}
		if colon < 0 {
			return nil, false
		}
		name := strings.TrimRight(string(line[:colon]), " \t")
		value := strings.TrimSpace(string(line[colon+1:]))
		if strings.Contains(name, " #") ||
			(value != "[]" && value != "{}" && value != "" && strings.IndexByte("\"'{[", value[0]) >= 0) {
			return nil, false
		}
		keys = append(keys, keyAt{name: name, line: lineNo})
	}
	return keys, true
}
