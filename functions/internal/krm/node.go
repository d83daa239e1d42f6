package krm

import (
	"strconv"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Node returns the YAML node of obj itself, not a copy (the SDK's
// CopyToResourceNode copies, MoveToResourceNode empties obj): reading it costs
// nothing, and a change to it is a change to obj.
func Node(obj *fn.KubeObject) *yaml.Node {
	rn := obj.MoveToResourceNode()
	node := rn.YNode()
	*obj = *fn.MoveToKubeObject(rn)
	return node
}

func keyNode(key string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: key}
}

// mappingValue is the value of key in the mapping n, or in the mapping n is
// an alias of; nil when n is not a mapping or has no such key.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalarValue is the value of key in the mapping n when it is a scalar or an
// alias of one, else "".
func scalarValue(n *yaml.Node, key string) string {
	v := mappingValue(n, key)
	if v != nil && v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// firstAlias finds the first alias node under n, depth first, and returns its
// field path (under the path of n) and the anchor it refers to.
func firstAlias(n *yaml.Node, path string) (field, anchor string, found bool) {
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias != nil {
			anchor = n.Alias.Anchor
		}
		return path, anchor, true
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if path != "" {
				key = path + "." + key
			}
			if field, anchor, found := firstAlias(n.Content[i+1], key); found {
				return field, anchor, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if field, anchor, found := firstAlias(c, path+"["+strconv.Itoa(i)+"]"); found {
				return field, anchor, true
			}
		}
	}
	return "", "", false
}

// HoldsAlias reports whether the item holds a YAML alias node, which the kpt
// SDK's accessors panic on.
func HoldsAlias(item *fn.KubeObject) bool {
	_, _, found := firstAlias(Node(item), "")
	return found
}

// AnnotationOf is item's annotation key, "" when it has none, read following
// YAML aliases (of the metadata, the annotations or the value) where the kpt
// SDK's accessors panic on them.
func AnnotationOf(item *fn.KubeObject, key string) string {
	return scalarValue(mappingValue(mappingValue(Node(item), "metadata"), "annotations"), key)
}

// MetadataOf is the metadata field key (name, namespace) of item, "" when
// it has none, read following YAML aliases.
func MetadataOf(item *fn.KubeObject, key string) string {
	return scalarValue(mappingValue(Node(item), "metadata"), key)
}
