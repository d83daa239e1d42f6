package templates

import (
	"slices"
	"strconv"
	"strings"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
)

// IsTemplated reports whether s holds a policy template, a managed-cluster
// template ({{ ... }}) or a hub template ({{hub ... hub}}), by the rule OCM's
// controllers use: the library's HasTemplate with the default delimiter, which
// starts a hub template too.
func IsTemplated(s string) bool {
	return gotemplates.HasTemplate([]byte(s), "", false)
}

// IsHubTemplated reports whether s holds a hub template.
func IsHubTemplated(s string) bool {
	return HasHubTemplate([]byte(s))
}

// TemplatedField is a field of an object whose value, or whose key, holds a
// template.
type TemplatedField struct {
	// Path is the field's path from the object's root, keys joined by dots
	// (a key holding a dot or a bracket is written [key]) and list positions
	// as [i]: spec.subscription.config, metadata.labels[app.kubernetes.io/env],
	// spec.object-templates[0].objectDefinition.data.
	Path string
	// Hub is true when the template is a hub template; a string can hold
	// both kinds, then Hub is true.
	Hub bool
	// Key is true when the field's key, not its value, is templated.
	Key bool
}

// TemplatedFields returns the templated fields of v, an object decoded from
// JSON (maps of string keys, lists, strings, numbers, booleans, nil), under
// path ("" for the root), in a stable order: map keys sorted, lists in order.
// The fields of a templated string are not looked into: the template decides
// them.
func TemplatedFields(v any, path string) []TemplatedField {
	var out []TemplatedField
	collectTemplatedFields(v, path, &out)
	return out
}

func collectTemplatedFields(v any, path string, out *[]TemplatedField) {
	switch v := v.(type) {
	case string:
		if IsTemplated(v) {
			*out = append(*out, TemplatedField{Path: path, Hub: IsHubTemplated(v)})
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			child := FieldPath(path, k)
			if IsTemplated(k) {
				*out = append(*out, TemplatedField{Path: child, Hub: IsHubTemplated(k), Key: true})
			}
			collectTemplatedFields(v[k], child, out)
		}
	case []any:
		for i, e := range v {
			collectTemplatedFields(e, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// FieldPath is the path of the field key under path, as TemplatedField
// writes paths.
func FieldPath(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// Resolver names who resolves a template: "the hub" for a hub template, "each
// managed cluster" for a managed-cluster one. Messages about templated fields
// use it.
func (f TemplatedField) Resolver() string {
	if f.Hub {
		return "the hub, for each cluster"
	}
	return "each managed cluster"
}

// WithoutTemplated returns a copy of v, an object decoded from JSON, without
// its templated fields: a templated value is left out of its map or list, a
// templated key with its value. What remains decodes into the object's typed
// form, whose non-string fields a template (toInt, toBool, toLiteral) would
// not fit; nil when v itself is a templated string.
func WithoutTemplated(v any) any {
	switch v := v.(type) {
	case string:
		if IsTemplated(v) {
			return nil
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if IsTemplated(k) || isTemplatedString(e) {
				continue
			}
			out[k] = WithoutTemplated(e)
		}
		return out
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			if isTemplatedString(e) {
				continue
			}
			out = append(out, WithoutTemplated(e))
		}
		return out
	}
	return v
}

func isTemplatedString(v any) bool {
	s, ok := v.(string)
	return ok && IsTemplated(s)
}

// Under reports whether path is f's path or the path of a field under it.
func (f TemplatedField) Under(path string) bool {
	return path == f.Path || strings.HasPrefix(path, f.Path+".") || strings.HasPrefix(path, f.Path+"[")
}
