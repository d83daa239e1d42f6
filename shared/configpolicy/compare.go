package configpolicy

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Comparison is the result of comparing an existing object with an object
// template.
type Comparison struct {
	// Matches is true when the object is as the template wants it.
	Matches bool
	// Mismatches are the paths of the fields that differ, sorted, e.g.
	// "data.key", "metadata.labels.team", "spec.ports[1]".
	Mismatches []string
	// Merged is the object enforce writes to make it match: existing with the
	// template merged in, status as it was. Nil when Matches.
	Merged map[string]any
	// Expected is the object as the template describes it: Merged with the
	// template's status merged in too (what a diff shows). Nil when Matches.
	Expected map[string]any
}

// Fixable reports whether writing Merged changes something: some field outside
// status differs. A mismatch under status cannot be written.
func (c Comparison) Fixable() bool {
	return slices.ContainsFunc(c.Mismatches, func(m string) bool { return !isStatusPath(m) })
}

// statusDiffers reports whether a field under status differs.
func (c Comparison) statusDiffers() bool { return slices.ContainsFunc(c.Mismatches, isStatusPath) }

func isStatusPath(path string) bool {
	return path == "status" || strings.HasPrefix(path, "status.") || strings.HasPrefix(path, "status[")
}

// identity are the top-level fields that name the object rather than describe it.
var identity = []string{"apiVersion", "kind", "metadata"}

// Compare compares existing with the template's objectDefinition desired, the
// fields with ct (musthave or mustonlyhave; mustnothave compares as musthave)
// and labels and annotations with metadataCT. Neither argument is modified.
func Compare(desired, existing map[string]any, ct, metadataCT policyv1.ComplianceType) Comparison {
	only := ct == policyv1.MustOnlyHave
	metaOnly := metadataCT == policyv1.MustOnlyHave
	merged := deepCopyMap(existing)
	if merged == nil {
		merged = map[string]any{}
	}
	var mismatches []string

	desiredMeta, _ := desired["metadata"].(map[string]any)
	existingMeta, _ := existing["metadata"].(map[string]any)
	for _, field := range []string{"labels", "annotations"} {
		want, ok := desiredMeta[field]
		if !ok {
			continue
		}
		have := existingMeta[field]
		path := "metadata." + field
		if diff := compareValue(want, have, metaOnly, path); len(diff) > 0 {
			mismatches = append(mismatches, diff...)
			meta, _ := merged["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
				merged["metadata"] = meta
			}
			meta[field] = mergeValue(want, have, metaOnly)
		}
	}

	var status any
	statusDiffers := false
	for _, key := range sortedKeys(desired) {
		if slices.Contains(identity, key) {
			continue
		}
		want, have := desired[key], existing[key]
		if diff := compareValue(want, have, only, key); len(diff) > 0 {
			mismatches = append(mismatches, diff...)
			if key == "status" {
				status, statusDiffers = mergeValue(want, have, only), true
			} else {
				merged[key] = mergeValue(want, have, only)
			}
		}
	}
	if len(mismatches) == 0 {
		return Comparison{Matches: true}
	}
	slices.Sort(mismatches)
	expected := merged
	if statusDiffers {
		expected = deepCopyMap(merged)
		expected["status"] = status
	}
	return Comparison{Mismatches: slices.Compact(mismatches), Merged: merged, Expected: expected}
}

// compareValue returns the paths under path where have is not as want wants it.
func compareValue(want, have any, only bool, path string) []string {
	if isEmpty(want) && isEmpty(have) {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for _, k := range sortedKeys(w) {
			out = append(out, compareValue(w[k], h[k], only, path+"."+k)...)
		}
		if only {
			for _, k := range sortedKeys(h) {
				if _, wanted := w[k]; !wanted && !isEmpty(h[k]) {
					out = append(out, path+"."+k)
				}
			}
		}
		return out
	case []any:
		h, ok := have.([]any)
		if !ok {
			return []string{path}
		}
		if only && len(h) != len(w) {
			return []string{path}
		}
		used := make([]bool, len(h))
		var out []string
		for i, item := range w {
			j := matchItem(item, h, used, only)
			if j < 0 {
				out = append(out, path+"["+strconv.Itoa(i)+"]")
				continue
			}
			used[j] = true
		}
		return out
	default:
		if !scalarEqual(want, have) {
			return []string{path}
		}
		return nil
	}
}

// matchItem returns the index of the first unused item of have that item
// matches, or -1.
func matchItem(item any, have []any, used []bool, only bool) int {
	for j, h := range have {
		if !used[j] && len(compareValue(item, h, only, "")) == 0 {
			return j
		}
	}
	return -1
}

// mergeValue returns have with want merged in: maps key by key, lists with the
// template's items that no item matches appended, scalars replaced. With only,
// the result is want itself.
func mergeValue(want, have any, only bool) any {
	if only {
		return deepCopy(want)
	}
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return deepCopy(w)
		}
		out := deepCopyMap(h)
		for _, k := range sortedKeys(w) {
			out[k] = mergeValue(w[k], h[k], false)
		}
		return out
	case []any:
		h, ok := have.([]any)
		if !ok {
			return deepCopy(w)
		}
		out := deepCopy(h).([]any)
		used := make([]bool, len(h))
		for _, item := range w {
			if j := matchItem(item, h, used, false); j >= 0 {
				used[j] = true
				continue
			}
			out = append(out, deepCopy(item))
		}
		return out
	default:
		return want
	}
}

// isEmpty reports whether v counts as a missing field: nil, "", {} or [].
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// scalarEqual compares scalars, numbers by value whatever their Go type.
func scalarEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	}
	switch a.(type) {
	case string, bool, nil:
		return a == b
	}
	return false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return deepCopy(m).(map[string]any)
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
