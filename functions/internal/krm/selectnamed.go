package krm

import (
	"errors"
	"fmt"
	"strings"
)

// SelectNamed returns the items a functionConfig's list of names selects
// (field, e.g. "policies"): each entry is "name" or "namespace/name", and an
// entry that names no item is an error naming field[i]. key gives an item's
// namespace and name. Items keep their order.
func SelectNamed[T any](items []T, key func(T) (namespace, name string), field string, names []string) ([]T, error) {
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
	var errs []error
	for i, ok := range matched {
		if !ok {
			errs = append(errs, fmt.Errorf("%s[%d]: no Policy %q in the input", field, i, names[i]))
		}
	}
	return out, errors.Join(errs...)
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
