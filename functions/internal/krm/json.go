package krm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

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

func marshalJSON(node *yaml.Node) ([]byte, error) {
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

// NodeFromJSON returns the JSON value raw as a YAML node in block style: the
// node kyaml's yaml.Parse makes of the JSON text, with the flow style and the
// quotes of JSON taken off (the encoder quotes the strings that need it), built
// from the JSON tokens without running the YAML parser.
func NodeFromJSON(raw []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	node, err := nodeFromTokens(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more JSON after the value")
	}
	return node, nil
}

func nodeFromTokens(dec *json.Decoder) (*yaml.Node, error) {
	token, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := token.(type) {
	case json.Delim:
		node := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		if t == '[' {
			node = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		}
		for dec.More() {
			if node.Kind == yaml.MappingNode {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				node.Content = append(node.Content, scalarNode(yaml.NodeTagString, key.(string)))
			}
			value, err := nodeFromTokens(dec)
			if err != nil {
				return nil, err
			}
			node.Content = append(node.Content, value)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return node, nil
	case string:
		return scalarNode(yaml.NodeTagString, t), nil
	case json.Number:
		// The tag YAML resolves the number to: !!int or !!float.
		return scalarNode((&yaml.Node{Kind: yaml.ScalarNode, Value: t.String()}).ShortTag(), t.String()), nil
	case bool:
		return scalarNode(yaml.NodeTagBool, fmt.Sprint(t)), nil
	default: // nil
		return scalarNode(yaml.NodeTagNull, "null"), nil
	}
}

func scalarNode(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
