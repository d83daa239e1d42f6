package krm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// APIVersion is the apiVersion of the functionConfigs of this repository's
// functions.
const APIVersion = "fn.fleetpolicy.io/v1alpha1"

// FieldError is a value that cannot be decoded into its field.
type FieldError struct {
	// Field is the path of the field, e.g. spec.dependencies.
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Decode decodes obj into the typed value into points at, through obj's JSON
// form (MarshalJSON) as the API server would; unknown fields are ignored. A
// value of the wrong type yields a *FieldError naming the field.
func Decode(obj *fn.KubeObject, into any) error {
	return decodeJSON(Node(obj), into, false)
}

// DecodeConfig decodes the functionConfig config into cfg, a pointer to the
// struct of the config's top-level fields (apiVersion, kind and metadata are not
// decoded). Unknown fields are refused. A missing config, or kpt's placeholder
// (a ConfigMap without data, which kpt fn eval passes when given no config),
// leaves cfg as it is. Any other config must have apiVersion
// fn.fleetpolicy.io/v1alpha1 and the given kind. Errors name the config and the
// field.
func DecodeConfig(config *fn.KubeObject, kind string, cfg any) error {
	if config == nil || config.IsEmpty() || isKptPlaceholder(config) {
		return nil
	}
	name := fmt.Sprintf("functionConfig %s %q", config.GetKind(), config.GetName())
	if config.GetAPIVersion() != APIVersion || config.GetKind() != kind {
		return fmt.Errorf("%s: apiVersion %q and kind %q are not supported: want apiVersion %s, kind %s",
			name, config.GetAPIVersion(), config.GetKind(), APIVersion, kind)
	}
	node := config.CopyToResourceNode()
	for _, field := range []string{"apiVersion", "kind", "metadata"} {
		if err := node.PipeE(yaml.Clear(field)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := decodeJSON(node.YNode(), cfg, true); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func isKptPlaceholder(config *fn.KubeObject) bool {
	if config.GetAPIVersion() != "v1" || config.GetKind() != "ConfigMap" {
		return false
	}
	data, _, _ := config.NestedStringMap("data")
	return len(data) == 0
}

func decodeJSON(node *yaml.Node, into any, strict bool) error {
	raw, err := marshalJSON(node)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	err = dec.Decode(into)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return &FieldError{Field: typeErr.Field, Message: fmt.Sprintf("got %s, want %s", article(typeErr.Value), describe(typeErr.Type))}
	case strings.HasPrefix(err.Error(), `json: unknown field "`):
		field := strings.TrimSuffix(strings.TrimPrefix(err.Error(), `json: unknown field "`), `"`)
		return &FieldError{Field: field, Message: "unknown field"}
	}
	return err
}

// describe names the JSON shape a Go type decodes from.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// article prefixes the JSON value kind json reports ("string", "array", ...)
// with an article, naming arrays lists.
func article(value string) string {
	switch {
	case value == "array":
		return "a list"
	case value == "object":
		return "an object"
	case strings.HasPrefix(value, "number"):
		return "a number"
	case value == "bool":
		return "a boolean"
	}
	return "a " + value
}

// Object returns obj's JSON form as a map: exactly what json.Unmarshal gives of
// MarshalJSON(obj) (numbers are float64, timestamps RFC 3339 strings, a !!binary
// value the string of its bytes, invalid UTF-8 in a string U+FFFD), without
// writing or reading JSON text. Where MarshalJSON fails, Object fails with the
// same error: YAML's (a duplicate key, an alias of itself, a bad !!binary, ...)
// or encoding/json's (a NaN or infinite number, a mapping inside obj with a key
// that is not a string, ...).
//
// An object of plain YAML, as Kubernetes objects are, is read in one walk of its
// nodes (plainJSON); any other is decoded by YAML and its values then made the
// ones JSON gives (jsonValue).
func Object(obj *fn.KubeObject) (map[string]any, error) {
	node := Node(obj)
	if value, plain := plainJSON(node); plain {
		if object, ok := value.(map[string]any); ok {
			return object, nil
		}
	}
	object := map[string]any{}
	if err := node.Decode(&object); err != nil {
		return nil, err
	}
	return jsonObject(object)
}

// plainJSON returns the JSON value of n and true when n is plain YAML: mappings
// with distinct string keys (and no merge key <<), sequences, and scalars that
// JSON reads as YAML does: strings of valid UTF-8, null (also ~, Null, NULL or
// nothing), true and false (also True, TRUE, False, FALSE; YAML 1.1's yes, no,
// on and off are strings to YAML 1.2 and so to yaml.v3), decimal integers and
// finite decimal floats. Aliases, the non-specific tag !, custom tags,
// timestamps, !!binary and numbers in other bases are not plain.
func plainJSON(n *yaml.Node) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content)%2 != 0 {
			return nil, false
		}
		object := make(map[string]any, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			key := n.Content[i]
			if !isPlainKey(key) {
				return nil, false
			}
			if _, duplicate := object[key.Value]; duplicate {
				return nil, false
			}
			value, plain := plainJSON(n.Content[i+1])
			if !plain {
				return nil, false
			}
			object[key.Value] = value
		}
		return object, true
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		for i, item := range n.Content {
			value, plain := plainJSON(item)
			if !plain {
				return nil, false
			}
			list[i] = value
		}
		return list, true
	case yaml.ScalarNode:
		return plainScalar(n)
	}
	return nil, false
}

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

// plainScalar is plainJSON of a scalar node.
func plainScalar(n *yaml.Node) (any, bool) {
	if n.Tag == "!" {
		return nil, false
	}
	switch tag := n.ShortTag(); tag {
	case yaml.NodeTagString:
		return n.Value, utf8.ValidString(n.Value)
	case yaml.NodeTagNull:
		if isPlainNull(n.Value) {
			return nil, true
		}
	case yaml.NodeTagBool:
		if value, ok := plainBool(n.Value); ok {
			return value, true
		}
	case yaml.NodeTagInt, yaml.NodeTagFloat:
		// JSON reads every number as the nearest float.
		switch v, ok := plainNumber(n.Value, tag); v := v.(type) {
		case int64:
			return float64(v), ok
		case uint64:
			return float64(v), ok
		case float64:
			return v, ok
		}
	}
	return nil, false
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

// jsonValue returns v, a value YAML decodes into an interface{}, as
// json.Unmarshal gives it of json.Marshal(v), or the error json.Marshal gives
// for the first bad value it meets (map keys in sorted order). Lists and maps
// are changed in place.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool:
		return v, nil
	case string:
		return jsonString(v), nil
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(v), Str: strconv.FormatFloat(v, 'g', -1, 64)}
		}
		return v, nil
	case time.Time:
		text, err := v.MarshalJSON()
		if err != nil {
			return nil, &json.MarshalerError{Type: reflect.TypeOf(v), Err: err}
		}
		return string(text[1 : len(text)-1]), nil // RFC 3339: nothing to unescape
	case []any:
		for i, item := range v {
			value, err := jsonValue(item)
			if err != nil {
				return nil, err
			}
			v[i] = value
		}
		return v, nil
	case map[string]any:
		return jsonObject(v)
	}
	// A mapping with a key that is not a string: YAML makes it a
	// map[interface{}]interface{}.
	return nil, &json.UnsupportedTypeError{Type: reflect.TypeOf(v)}
}

// jsonObject is jsonValue of a map, whose values it changes in place.
func jsonObject(m map[string]any) (map[string]any, error) {
	var (
		firstErr    error
		firstErrKey string
		invalidKeys bool
	)
	for k, item := range m {
		value, err := jsonValue(item)
		if err != nil {
			if firstErr == nil || k < firstErrKey {
				firstErr, firstErrKey = err, k
			}
			continue
		}
		m[k] = value
		invalidKeys = invalidKeys || !utf8.ValidString(k)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if !invalidKeys {
		return m, nil
	}
	// json.Marshal writes the keys in sorted order with invalid UTF-8
	// replaced, and json.Unmarshal keeps the last of the keys that became one.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	object := make(map[string]any, len(m))
	for _, k := range keys {
		object[jsonString(k)] = m[k]
	}
	return object, nil
}

// jsonString is s with each byte that is not part of valid UTF-8 replaced by
// U+FFFD, as json.Marshal writes it.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsObjectName reports whether s names an object of a functionConfig's list
// as "name" (in any namespace) or "namespace/name".
func IsObjectName(s string) bool {
	namespace, name, qualified := strings.Cut(s, "/")
	if !qualified {
		return s != ""
	}
	return namespace != "" && name != "" && !strings.Contains(name, "/")
}
