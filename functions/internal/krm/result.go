package krm

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ObjectResult is a result about obj and, when field is not empty, about that
// field of it (a path such as spec.dependencies[0].compliance). The resourceRef
// and file come from obj and its path and index annotations, read from its
// nodes through any YAML alias (the SDK's accessors panic on aliases), as far
// as they are scalars. A nil obj gives a result about no object.
func ObjectResult(obj *fn.KubeObject, severity fn.Severity, field, message string) *fn.Result {
	r := &fn.Result{Message: message, Severity: severity}
	if obj == nil {
		return r
	}
	node := Node(obj)
	metadata := mappingValue(node, "metadata")
	annotations := mappingValue(metadata, "annotations")
	r.ResourceRef = &fn.ResourceRef{
		APIVersion: scalarValue(node, "apiVersion"),
		Kind:       scalarValue(node, "kind"),
		Name:       scalarValue(metadata, "name"),
		Namespace:  scalarValue(metadata, "namespace"),
	}
	if path := scalarValue(annotations, kioutil.PathAnnotation); path != "" {
		index, _ := strconv.Atoi(scalarValue(annotations, kioutil.IndexAnnotation))
		r.File = &fn.File{Path: path, Index: max(index, 0)}
	}
	if field != "" {
		r.Field = &fn.Field{Path: field}
	}
	return r
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

// resultNode is r as a YAML node: the node the YAML encoder makes of r,
// written the same, built directly for the results that have only strings
// and a file index (those of this repository's functions, but for the tags of
// check-placement --explain), which is many times faster than encoding r as
// YAML text and parsing that.
func resultNode(r *fn.Result) (*yaml.Node, error) {
	if len(r.Tags) > 0 || r.Field != nil && (r.Field.CurrentValue != nil || r.Field.ProposedValue != nil) || !validUTF8(r) {
		node := &yaml.Node{}
		return node, node.Encode(r)
	}
	node := mappingNode()
	addString(node, "message", r.Message)
	addString(node, "severity", string(r.Severity))
	if ref := r.ResourceRef; ref != nil {
		refNode := mappingNode()
		addString(refNode, "apiVersion", ref.APIVersion)
		addString(refNode, "kind", ref.Kind)
		addString(refNode, "name", ref.Name)
		addString(refNode, "namespace", ref.Namespace)
		node.Content = append(node.Content, keyNode("resourceRef"), refNode)
	}
	if field := r.Field; field != nil {
		fieldNode := mappingNode()
		addString(fieldNode, "path", field.Path)
		node.Content = append(node.Content, keyNode("field"), fieldNode)
	}
	if file := r.File; file != nil {
		fileNode := mappingNode()
		addString(fileNode, "path", file.Path)
		if file.Index != 0 {
			fileNode.Content = append(fileNode.Content, keyNode("index"),
				&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(file.Index)})
		}
		node.Content = append(node.Content, keyNode("file"), fileNode)
	}
	return node, nil
}

func validUTF8(r *fn.Result) bool {
	values := []string{r.Message, string(r.Severity)}
	if ref := r.ResourceRef; ref != nil {
		values = append(values, ref.APIVersion, ref.Kind, ref.Name, ref.Namespace)
	}
	if r.Field != nil {
		values = append(values, r.Field.Path)
	}
	if r.File != nil {
		values = append(values, r.File.Path)
	}
	for _, v := range values {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

func mappingNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap} }

// addString adds the field key with a string value to a mapping, unless the
// value is empty (every string field of a result is omitempty).
func addString(mapping *yaml.Node, key, value string) {
	if value != "" {
		mapping.Content = append(mapping.Content, keyNode(key), stringNode(value))
	}
}

// stringNode is the node of a string, in the style the YAML encoder gives it:
// literal when it spans lines, double-quoted when it would read as another
// type (YAML 1.1 booleans such as "yes" and sexagesimal numbers included),
// plain otherwise (the encoder quotes what cannot be plain). The encoder
// writes "<<" plain, which reads back as a merge key.
func stringNode(s string) *yaml.Node {
	node := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
	switch {
	case s == "<<":
		node.Tag = "!!merge"
	case strings.Contains(s, "\n"):
		node.Style = yaml.LiteralStyle
	case (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).ShortTag() != yaml.NodeTagString || isYAML11Bool(s) || sexagesimal.MatchString(s):
		node.Style = yaml.DoubleQuotedStyle
	}
	return node
}

// isYAML11Bool reports whether s is a boolean in YAML 1.1, which the encoder
// quotes.
func isYAML11Bool(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}

// sexagesimal matches the base 60 numbers of YAML 1.1 (1:30), which the
// encoder quotes.
var sexagesimal = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)
