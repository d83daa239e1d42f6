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

// APIVersion is the apiVersion of the functionConfigs of this repository's
// functions.
const APIVersion = "fn.fleetpolicy.io/v1alpha1"

// Decode decodes obj into the typed value into points at, through obj's JSON
// form (MarshalJSON) as the API server would; unknown fields are ignored. A
// value of the wrong type yields a *field.Error naming the field (its detail
// says what was found and what was wanted).
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
	for _, key := range []string{"apiVersion", "kind", "metadata"} {
		if err := node.PipeE(yaml.Clear(key)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	err := decodeJSON(node.YNode(), cfg, true)
	var fieldErr *field.Error
	if errors.As(err, &fieldErr) {
		return fmt.Errorf("%s: %s: %s", name, fieldErr.Field, fieldErr.Detail)
	}
	if err != nil {
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
		return field.TypeInvalid(field.NewPath(typeErr.Field), field.OmitValueType{},
			fmt.Sprintf("got %s, want %s", article(typeErr.Value), describe(typeErr.Type)))
	case strings.HasPrefix(err.Error(), `json: unknown field "`):
		name := strings.TrimSuffix(strings.TrimPrefix(err.Error(), `json: unknown field "`), `"`)
		return field.Forbidden(field.NewPath(name), "unknown field")
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
