package krm

import (
	"encoding/json"
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

// plainJSON returns the JSON value of n and true when n is plain YAML (see
// plain.go).
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
