package main

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

// decode decodes item into into (a pointer to its typed object). When decoding
// fails, the error result names the field at fault with its list indices, also
// when the error comes from a type's own JSON decoding (a duration, an
// int-or-string, a time), which encoding/json reports without the field.
func decode(item *fn.KubeObject, into any) *fn.Result {
	err := krm.Decode(item, into)
	if err == nil {
		return nil
	}
	path, detail := "", err.Error()
	var fieldErr *field.Error
	named := errors.As(err, &fieldErr)
	if named {
		path, detail = fieldErr.Field, fieldErr.Detail
	}
	if raw, jsonErr := item.CopyToResourceNode().MarshalJSON(); jsonErr == nil {
		if located, cause := locateDecodeError(reflect.TypeOf(into).Elem(), raw, ""); located != "" {
			path = located
			if !named {
				detail = cause.Error()
			}
		}
	}
	return krm.Unreadable(item, &field.Error{Type: field.ErrorTypeTypeInvalid, Field: path, BadValue: field.OmitValueType{}, Detail: detail})
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// locateDecodeError returns the path (under path) of the innermost value of raw
// that does not decode into a value of type t, and its error; "" when raw
// decodes. It follows JSON object keys to struct fields by their json names
// (embedded structs included), list elements and map values.
func locateDecodeError(t reflect.Type, raw []byte, path string) (string, error) {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return path, err
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return path, err
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			ft, known := fields[k]
			if !known {
				continue
			}
			if p, e := locateDecodeError(ft, obj[k], join(path, k)); p != "" {
				return p, e
			}
		}
	case reflect.Slice, reflect.Array:
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return path, err
		}
		for i, elem := range list {
			if p, e := locateDecodeError(t.Elem(), elem, path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p, e
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return path, err
		}
		for _, k := range sortedKeys(obj) {
			if p, e := locateDecodeError(t.Elem(), obj[k], join(path, k)); p != "" {
				return p, e
			}
		}
	}
	return path, err
}

// jsonFields maps the JSON names of a struct's fields, those of embedded
// structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, shadowed := fields[k]; !shadowed {
						fields[k] = v
					}
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	return path + "." + key
}

func sortedKeys(obj map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
