package krm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Decode decodes obj into the typed value into points at, through obj's JSON
// form (MarshalJSON) as the API server would; unknown fields are ignored. A
// value that does not decode yields a *field.Error naming the field with its
// list indices (locateDecodeError), also when the error comes from a type's
// own JSON decoding (a duration, an int-or-string, a time); its detail says
// what was found and what was wanted, or why the type refused it.
func Decode(obj *fn.KubeObject, into any) error {
	return decodeJSON(Node(obj), into, false)
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
	if err == nil {
		return nil
	}
	if name, unknown := strings.CutPrefix(err.Error(), `json: unknown field "`); unknown {
		return field.Forbidden(field.NewPath(strings.TrimSuffix(name, `"`)), "unknown field")
	}
	var path *field.Path
	cause := err
	if t := reflect.TypeOf(into); t != nil && t.Kind() == reflect.Pointer {
		if located, locatedErr := locateDecodeError(t.Elem(), raw, nil); located != nil {
			path, cause = located, locatedErr
		}
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(cause, &typeErr):
		if path == nil {
			path = field.NewPath(typeErr.Field)
		}
		return field.TypeInvalid(path, field.OmitValueType{},
			fmt.Sprintf("got %s, want %s", article(typeErr.Value), describe(typeErr.Type)))
	case path != nil:
		return field.TypeInvalid(path, field.OmitValueType{}, cause.Error())
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
