package krm

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Plain YAML is YAML whose JSON form can be read straight from its nodes, with
// no YAML decoding: mappings with distinct string keys (and no merge key <<),
// sequences, and scalars that JSON reads as YAML does: strings of valid UTF-8,
// null (also ~, Null, NULL or nothing), true and false (also True, TRUE, False,
// FALSE; YAML 1.1's yes, no, on and off are strings to YAML 1.2 and so to
// yaml.v3), decimal integers and finite decimal floats. Aliases, the
// non-specific tag !, custom tags, timestamps, !!binary and numbers in other
// bases are not plain. Kubernetes objects are plain YAML. The predicates below
// are the one definition of it that Object (object.go) and MarshalJSON
// (marshal.go) both read.

// isPlainKey reports whether key is a mapping key of plain YAML: a string of
// valid UTF-8 other than the merge key <<.
func isPlainKey(key *yaml.Node) bool {
	return key.Kind == yaml.ScalarNode && key.Tag != "!" && key.ShortTag() == yaml.NodeTagString &&
		key.Value != "<<" && utf8.ValidString(key.Value)
}

// isPlainNull reports whether s is a spelling of the !!null value that YAML
// decodes as nil: nothing, ~, null, Null or NULL.
func isPlainNull(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

// plainBool returns the !!bool value s spells and whether it is one: true,
// True, TRUE, false, False or FALSE.
func plainBool(s string) (value, ok bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// plainNumber returns the number YAML decodes the decimal text s, resolved to
// tag (!!int or !!float), into: an int64 or, for !!int, a uint64 when too big;
// for !!float, a float64. ok is false where YAML refuses the number (!!int too
// big for a uint64, !!float of an integer that only fits a uint64, a float out
// of range), and for other spellings, which YAML reads in other bases (0x1F,
// 010, 1_000, +1) or not at all.
func plainNumber(s, tag string) (value any, ok bool) {
	if isDecimalInteger(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil { // -0 is 0
			if tag == yaml.NodeTagFloat {
				return float64(i), true
			}
			return i, true
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, tag == yaml.NodeTagInt
		}
		if tag == yaml.NodeTagInt {
			return nil, false
		}
	} else if tag != yaml.NodeTagFloat || !isDecimalFloat(s) {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// isDecimalInteger reports whether s is -?(0|[1-9][0-9]*).
func isDecimalInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	return digits(s) == len(s)
}

// isDecimalFloat reports whether s is a float as YAML reads one,
// -?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, with a point or an exponent
// (without either, YAML first tries to read an integer, possibly an octal one).
func isDecimalFloat(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole := digits(s)
	s = s[whole:]
	fraction := -1 // digits after the point; -1 without a point
	if strings.HasPrefix(s, ".") {
		fraction = digits(s[1:])
		s = s[1+fraction:]
	}
	if whole == 0 && fraction <= 0 {
		return false
	}
	if s == "" {
		return fraction >= 0
	}
	if s[0] != 'e' && s[0] != 'E' {
		return false
	}
	s = s[1:]
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	return s != "" && digits(s) == len(s)
}

// digits is the number of decimal digits s starts with.
func digits(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}
