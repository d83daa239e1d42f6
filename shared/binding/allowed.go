package binding

import "strings"

// ClustersAnnotation is the well-known annotation of policy-based placement
// (package placement): comma-separated cluster names that restrict where a policy
// is propagated. Resolve binds a policy that carries it only to the clusters its
// bindings select AND the annotation lists; an empty value allows none.
const ClustersAnnotation = "placement.fleetpolicy.io/clusters"

// AllowedClusters parses ClustersAnnotation from annotations: the listed cluster
// names (blanks and spaces ignored), and whether the annotation restricts at all.
func AllowedClusters(annotations map[string]string) (map[string]bool, bool) {
	value, ok := annotations[ClustersAnnotation]
	if !ok {
		return nil, false
	}
	allowed := map[string]bool{}
	for _, name := range strings.Split(value, ",") {
		if name = strings.TrimSpace(name); name != "" {
			allowed[name] = true
		}
	}
	return allowed, true
}
