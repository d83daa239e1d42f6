package krm

import "slices"

// ChangedKeys compares two maps of strings, such as an item's annotations
// before and after a function sets them: set are the keys after holds with a
// value before lacks or holds otherwise, removed the keys before holds and
// after lacks; both sorted.
func ChangedKeys(before, after map[string]string) (set, removed []string) {
	for k, value := range after {
		if old, ok := before[k]; !ok || old != value {
			set = append(set, k)
		}
	}
	for k := range before {
		if _, kept := after[k]; !kept {
			removed = append(removed, k)
		}
	}
	slices.Sort(set)
	slices.Sort(removed)
	return set, removed
}
