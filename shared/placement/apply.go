package placement

import (
	"maps"
	"slices"
	"strings"
)

// ManagedAnnotations is the annotation in which a placed resource records which
// of its annotations the placement policies set, so that an annotation a policy
// no longer sets is removed again on re-evaluation (remediation).
const ManagedAnnotations = "placement.fleetpolicy.io/managed-annotations"

// Apply returns the annotations of a resource that had current once r is
// applied: r's annotations merged in (r's values winning), the annotations the
// policies set on a previous evaluation but no longer set removed, and
// ManagedAnnotations listing r's keys (sorted, comma-separated; absent when r
// sets none). changed says whether the result differs from current. current is
// not modified.
func (r Result) Apply(current map[string]string) (annotations map[string]string, changed bool) {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range strings.Split(current[ManagedAnnotations], ",") {
		if k = strings.TrimSpace(k); k != "" {
			if _, still := r.Annotations[k]; !still {
				delete(out, k)
			}
		}
	}
	maps.Copy(out, r.Annotations)
	delete(out, ManagedAnnotations)
	if len(r.Annotations) > 0 {
		out[ManagedAnnotations] = strings.Join(slices.Sorted(maps.Keys(r.Annotations)), ",")
	}
	return out, !maps.Equal(out, current)
}
