package krm

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// locateDecodeError returns the path (under path) of the innermost value of
// raw that does not decode into a value of type t, and its error; nil when raw
// decodes. It follows JSON object keys to struct fields by their json names
// (embedded structs included), list elements and map values, so that it names
// the field also when the error comes from a type's own JSON decoding (a
// duration, an int-or-string, a time), which encoding/json reports without
// the field, and gives the list indices encoding/json leaves out.
func locateDecodeError(t reflect.Type, raw []byte, path *field.Path) (*field.Path, error) {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return nil, nil
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
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ft, known := fields[k]
			if !known {
				continue
			}
			if p, e := locateDecodeError(ft, obj[k], child(path, k)); p != nil {
				return p, e
			}
		}
	case reflect.Slice, reflect.Array:
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return path, err
		}
		for i, elem := range list {
			if p, e := locateDecodeError(t.Elem(), elem, path.Index(i)); p != nil {
				return p, e
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return path, err
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if p, e := locateDecodeError(t.Elem(), obj[k], child(path, k)); p != nil {
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

// child is the path of key under path: a field (path.key), or a map key
// (path[key]) when key holds a dot or a bracket and would not read back.
func child(path *field.Path, key string) *field.Path {
	switch {
	case path == nil:
		return field.NewPath(key)
	case strings.ContainsAny(key, ".[]"):
		return path.Key(key)
	}
	return path.Child(key)
}
