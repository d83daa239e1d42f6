package krm

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// NodeFromJSON returns the JSON value raw as a YAML node in block style: the
// node kyaml's yaml.Parse makes of the JSON text, with the flow style and the
// quotes of JSON taken off (the encoder quotes the strings that need it), built
// by a scanner of the JSON text without running the YAML parser.
//
// It accepts exactly the texts json.Valid accepts: one value with whitespace
// around it, nested no deeper than encoding/json allows. Strings read as
// encoding/json reads them (escapes undone; invalid UTF-8 and lone surrogates
// become U+FFFD). Numbers keep their text, tagged as YAML resolves it (!!int or
// !!float, or !!str for a float out of range); true and false are !!bool and
// null is !!null.
//
// The node values are substrings of one copy of raw, and the nodes and their
// Content lists are cut from a few shared arrays: a tree costs a handful of
// allocations, not a few per value.
func NodeFromJSON(raw []byte) (*yaml.Node, error) {
	text := string(raw)
	// open starts with room for the children of a large object.
	s := &jsonScanner{text: text, nodesAtMost: nodesAtMost(text), open: make([]*yaml.Node, 0, 64)}
	s.skipSpace()
	node, err := s.value(0)
	if err != nil {
		return nil, err
	}
	if s.skipSpace(); s.pos < len(s.text) {
		return nil, s.unexpected("the end after the value")
	}
	return node, nil
}

// maxJSONDepth is how deeply encoding/json lets arrays and objects nest.
const maxJSONDepth = 10000

// nodesAtMost is how many nodes the JSON text makes at most: one for the value,
// and one for each value or key after a '[', '{', ':' or ','. The characters
// counted inside strings make it more than that, but seldom by much.
func nodesAtMost(text string) int {
	return 1 + strings.Count(text, "[") + strings.Count(text, "{") + strings.Count(text, ":") + strings.Count(text, ",")
}

// jsonScanner reads one JSON text into YAML nodes.
type jsonScanner struct {
	text string
	pos  int
	// nodesAtMost sizes the arrays nodes and Content lists are cut from, so
	// that one of each is enough.
	nodesAtMost int
	// nodes and contents are the unused rest of those arrays.
	nodes    []yaml.Node
	contents []*yaml.Node
	// open holds the children read so far of the arrays and objects being read,
	// the innermost last.
	open []*yaml.Node
}

// value reads the value at s.pos, inside depth arrays and objects.
func (s *jsonScanner) value(depth int) (*yaml.Node, error) {
	if s.pos == len(s.text) {
		return nil, s.unexpected("a value")
	}
	switch c := s.text[s.pos]; {
	case c == '{':
		return s.collection(depth+1, yaml.MappingNode, yaml.NodeTagMap, '}')
	case c == '[':
		return s.collection(depth+1, yaml.SequenceNode, yaml.NodeTagSeq, ']')
	case c == '"':
		str, err := s.string()
		if err != nil {
			return nil, err
		}
		return s.node(yaml.ScalarNode, yaml.NodeTagString, str), nil
	case c == '-' || isDigit(c):
		return s.number()
	case c == 't':
		return s.literal("true", yaml.NodeTagBool)
	case c == 'f':
		return s.literal("false", yaml.NodeTagBool)
	case c == 'n':
		return s.literal("null", yaml.NodeTagNull)
	}
	return nil, s.unexpected("a value")
}

// collection reads the object or array at s.pos, the depth-th nested one,
// which ends with end.
func (s *jsonScanner) collection(depth int, kind yaml.Kind, tag string, end byte) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, s.errorf("arrays and objects nested more than %d deep", maxJSONDepth)
	}
	node := s.node(kind, tag, "")
	s.pos++
	if s.skipSpace(); s.next(end) {
		return node, nil
	}
	first := len(s.open)
	for {
		if kind == yaml.MappingNode {
			if s.pos == len(s.text) || s.text[s.pos] != '"' {
				return nil, s.unexpected("a string key")
			}
			key, err := s.string()
			if err != nil {
				return nil, err
			}
			s.open = append(s.open, s.node(yaml.ScalarNode, yaml.NodeTagString, key))
			if s.skipSpace(); !s.next(':') {
				return nil, s.unexpected("':' after the key")
			}
			s.skipSpace()
		}
		child, err := s.value(depth)
		if err != nil {
			return nil, err
		}
		s.open = append(s.open, child)
		s.skipSpace()
		if s.next(end) {
			break
		}
		if !s.next(',') {
			return nil, s.unexpected(fmt.Sprintf("',' or '%c'", end))
		}
		s.skipSpace()
	}
	node.Content = s.content(s.open[first:])
	s.open = s.open[:first]
	return node, nil
}

// string reads the string at s.pos. A string of valid UTF-8 without escapes is
// its own text; any other is left to encoding/json.
func (s *jsonScanner) string() (string, error) {
	ascii := true
	for i := s.pos + 1; i < len(s.text); i++ {
		switch c := s.text[i]; {
		case c == '"':
			str := s.text[s.pos+1 : i]
			if !ascii && !utf8.ValidString(str) {
				return s.unquote()
			}
			s.pos = i + 1
			return str, nil
		case c == '\\':
			return s.unquote()
		case c < ' ':
			s.pos = i
			return "", s.errorf("control character %q in a string", c)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	s.pos = len(s.text)
	return "", s.unexpected(`'"' to end the string`)
}

// unquote reads the string at s.pos with encoding/json.
func (s *jsonScanner) unquote() (string, error) {
	end := s.pos + 1
	for ; end < len(s.text) && s.text[end] != '"'; end++ {
		if s.text[end] == '\\' {
			end++
		}
	}
	if end >= len(s.text) {
		s.pos = len(s.text)
		return "", s.unexpected(`'"' to end the string`)
	}
	var str string
	if err := json.Unmarshal([]byte(s.text[s.pos:end+1]), &str); err != nil {
		return "", s.errorf("string: %v", err)
	}
	s.pos = end + 1
	return str, nil
}

// number reads the number at s.pos.
func (s *jsonScanner) number() (*yaml.Node, error) {
	start := s.pos
	s.next('-')
	switch {
	case s.next('0'):
	case s.pos < len(s.text) && isDigit(s.text[s.pos]):
		s.digits()
	default:
		return nil, s.unexpected("a digit")
	}
	integer := true
	if s.next('.') {
		integer = false
		if !s.digits() {
			return nil, s.unexpected("a digit after the decimal point")
		}
	}
	if s.next('e') || s.next('E') {
		integer = false
		if !s.next('+') {
			s.next('-')
		}
		if !s.digits() {
			return nil, s.unexpected("a digit of the exponent")
		}
	}
	number := s.text[start:s.pos]
	tag := yaml.NodeTagInt
	// 18 characters, the sign included, always fit an int64; for other numbers
	// ask YAML.
	if !integer || len(number) > 18 {
		tag = (&yaml.Node{Kind: yaml.ScalarNode, Value: number}).ShortTag()
	}
	return s.node(yaml.ScalarNode, tag, number), nil
}

// digits skips the decimal digits at s.pos and reports whether there was one.
func (s *jsonScanner) digits() bool {
	start := s.pos
	for s.pos < len(s.text) && isDigit(s.text[s.pos]) {
		s.pos++
	}
	return s.pos > start
}

// literal reads word, true, false or null, at s.pos.
func (s *jsonScanner) literal(word, tag string) (*yaml.Node, error) {
	if !strings.HasPrefix(s.text[s.pos:], word) {
		return nil, s.unexpected(word)
	}
	s.pos += len(word)
	return s.node(yaml.ScalarNode, tag, word), nil
}

func isDigit(c byte) bool {
	return '0' <= c && c <= '9'
}

// next skips c if it is at s.pos and reports whether it was.
func (s *jsonScanner) next(c byte) bool {
	if s.pos < len(s.text) && s.text[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.text) {
		switch s.text[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// node returns a new node, cut from s.nodes.
func (s *jsonScanner) node(kind yaml.Kind, tag, value string) *yaml.Node {
	if len(s.nodes) == 0 {
		s.nodes = make([]yaml.Node, s.nodesAtMost)
	}
	node := &s.nodes[0]
	s.nodes = s.nodes[1:]
	node.Kind, node.Tag, node.Value = kind, tag, value
	return node
}

// content returns a copy of children, cut from s.contents; its capacity is its
// length, so that appending to it copies it rather than overwriting another
// node's Content.
func (s *jsonScanner) content(children []*yaml.Node) []*yaml.Node {
	n := len(children)
	if len(s.contents) < n {
		s.contents = make([]*yaml.Node, max(n, s.nodesAtMost))
	}
	content := s.contents[:n:n]
	s.contents = s.contents[n:]
	copy(content, children)
	return content
}

// unexpected is the error of finding at s.pos something other than want.
func (s *jsonScanner) unexpected(want string) error {
	if s.pos == len(s.text) {
		return s.errorf("want %s, found the end of the text", want)
	}
	return s.errorf("want %s, found %q", want, s.text[s.pos:s.pos+1])
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at byte %d: %s", s.pos, fmt.Sprintf(format, args...))
}
