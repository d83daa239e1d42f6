package krm

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MarshalJSON returns obj as JSON: the value kyaml's RNode.MarshalJSON gives
// (YAML resolves the scalars, aliases and merge keys), decoded from obj's own
// YAML nodes rather than through a copy written out as YAML text and parsed
// again, which costs more than all the rest of decoding an object.
func MarshalJSON(obj *fn.KubeObject) ([]byte, error) {
	return marshalJSON(Node(obj))
}

// marshalJSON returns the JSON text json.Marshal gives of what YAML decodes
// node into. A tree of plain YAML (see plain.go), as Kubernetes objects are, is
// written straight from its nodes; any other is decoded by YAML and marshaled.
func marshalJSON(node *yaml.Node) ([]byte, error) {
	if node.Kind == yaml.MappingNode || node.Kind == yaml.SequenceNode {
		// The JSON of a typical Policy fits in 1 KiB.
		w := plainJSONWriter{text: make([]byte, 0, 1024)}
		if w.value(node) {
			return w.text, nil
		}
	}
	return decodedJSON(node)
}

// decodedJSON is json.Marshal of what YAML decodes node into: what marshalJSON
// gives of any tree, and the oracle its tests hold the writer of plain YAML to.
func decodedJSON(node *yaml.Node) ([]byte, error) {
	if node.Kind == yaml.SequenceNode {
		var list []any
		if err := node.Decode(&list); err != nil {
			return nil, err
		}
		return json.Marshal(list)
	}
	object := map[string]any{}
	if err := node.Decode(&object); err != nil {
		return nil, err
	}
	return json.Marshal(object)
}

// plainJSONWriter writes the JSON text of a tree of plain YAML nodes: the bytes
// json.Marshal gives of the tree decoded by YAML, object keys in sorted order.
// Its methods report false, leaving text unfinished, at the first node that is
// not plain YAML.
type plainJSONWriter struct {
	text []byte
	// keys holds the indexes in Content of the keys of the mappings being
	// written, in sorted order, the innermost mapping's last.
	keys []int
}

func (w *plainJSONWriter) value(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode:
		return w.mapping(n)
	case yaml.SequenceNode:
		w.text = append(w.text, '[')
		for i, item := range n.Content {
			if i > 0 {
				w.text = append(w.text, ',')
			}
			if !w.value(item) {
				return false
			}
		}
		w.text = append(w.text, ']')
		return true
	case yaml.ScalarNode:
		return w.scalar(n)
	}
	return false
}

// mapping writes n's keys in sorted order; YAML refuses duplicate keys.
func (w *plainJSONWriter) mapping(n *yaml.Node) bool {
	if len(n.Content)%2 != 0 {
		return false
	}
	first := len(w.keys)
	for i := 0; i < len(n.Content); i += 2 {
		if !isPlainKey(n.Content[i]) {
			return false
		}
		w.keys = append(w.keys, i)
	}
	keys := w.keys[first:]
	slices.SortFunc(keys, func(a, b int) int { return strings.Compare(n.Content[a].Value, n.Content[b].Value) })
	for j := 1; j < len(keys); j++ {
		if n.Content[keys[j]].Value == n.Content[keys[j-1]].Value {
			return false
		}
	}
	w.text = append(w.text, '{')
	// The values' mappings append to w.keys, which may move it: index it anew.
	for j := range len(keys) {
		i := w.keys[first+j]
		if j > 0 {
			w.text = append(w.text, ',')
		}
		w.text = appendJSONString(w.text, n.Content[i].Value)
		w.text = append(w.text, ':')
		if !w.value(n.Content[i+1]) {
			return false
		}
	}
	w.text = append(w.text, '}')
	w.keys = w.keys[:first]
	return true
}

// scalar writes the value YAML decodes n into, as json.Marshal writes it.
func (w *plainJSONWriter) scalar(n *yaml.Node) bool {
	if n.Tag == "!" {
		return false
	}
	switch n.ShortTag() {
	case yaml.NodeTagString:
		w.text = appendJSONString(w.text, n.Value)
		return true
	case yaml.NodeTagNull:
		if isPlainNull(n.Value) {
			w.text = append(w.text, "null"...)
			return true
		}
	case yaml.NodeTagBool:
		if value, ok := plainBool(n.Value); ok {
			w.text = strconv.AppendBool(w.text, value)
			return true
		}
	case yaml.NodeTagInt, yaml.NodeTagFloat:
		value, ok := plainNumber(n.Value, n.ShortTag())
		if !ok {
			return false
		}
		switch v := value.(type) {
		case int64:
			w.text = strconv.AppendInt(w.text, v, 10)
		case uint64:
			w.text = strconv.AppendUint(w.text, v, 10)
		case float64:
			return w.float(v)
		}
		return true
	}
	return false
}

// float writes f, a finite float, with json.Marshal: floats are rare in
// objects.
func (w *plainJSONWriter) float(f float64) bool {
	text, err := json.Marshal(f)
	w.text = append(w.text, text...)
	return err == nil
}

// appendJSONString appends s to b quoted as json.Marshal quotes it: with ", \
// and control characters escaped, and <, >, &, U+2028 and U+2029 too, and
// invalid UTF-8 replaced by U+FFFD. Most strings need none of that.
func appendJSONString(b []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < ' ' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
			return appendMarshaledString(b, s)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !ascii && (!utf8.ValidString(s) || strings.ContainsRune(s, '\u2028') || strings.ContainsRune(s, '\u2029')) {
		return appendMarshaledString(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendMarshaledString appends json.Marshal(s) to b.
func appendMarshaledString(b []byte, s string) []byte {
	text, _ := json.Marshal(s) // a string always marshals
	return append(b, text...)
}
