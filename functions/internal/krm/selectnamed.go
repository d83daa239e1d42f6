package krm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SelectNamed returns the items a functionConfig's list of Policy names
// selects (the list at path, e.g. policies): each entry is "name" or
// "namespace/name", and an entry that names no item is an error at
// path[i]. key gives an item's namespace and name. Items keep their order.
func SelectNamed[T any](items []T, key func(T) (namespace, name string), path *field.Path, names []string) ([]T, field.ErrorList) {
	matched := make([]bool, len(names))
	var out []T
	for _, item := range items {
		namespace, name := key(item)
		selected := false
		for i, n := range names {
			if n == name || n == namespace+"/"+name {
				matched[i], selected = true, true
			}
		}
		if selected {
			out = append(out, item)
		}
	}
	var errs field.ErrorList
	for i, ok := range matched {
		if !ok {
			errs = append(errs, &field.Error{Type: field.ErrorTypeNotFound, Field: path.Index(i).String(),
				BadValue: names[i], Detail: fmt.Sprintf("no Policy %q in the input", names[i])})
		}
	}
	return out, errs
}

// CheckObjectNames checks a functionConfig's list of object names (the list
// at path): each entry must be "name" (in any namespace) or
// "namespace/name".
func CheckObjectNames(path *field.Path, names []string) field.ErrorList {
	var errs field.ErrorList
	for i, s := range names {
		if !isObjectName(s) {
			errs = append(errs, field.Invalid(path.Index(i), s, fmt.Sprintf("%q is neither a name nor namespace/name", s)))
		}
	}
	return errs
}

// isObjectName reports whether s names an object as "name" or
// "namespace/name".
func isObjectName(s string) bool {
	namespace, name, qualified := strings.Cut(s, "/")
	if !qualified {
		return s != ""
	}
	return namespace != "" && name != "" && !strings.Contains(name, "/")
}
