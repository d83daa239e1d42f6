package testkit

import (
	"fmt"
	"strings"
)

// PlacementRuleBinding is the YAML of a PlacementRule name in namespace that
// has decided on clusters, and of a PlacementBinding name of it to policies:
// the shortest way for a test to bind root policies to clusters. The rule
// names a scheduler of its own (spec.schedulerName), so that the hub's
// PlacementRule scheduler leaves the decisions the test wrote alone.
func PlacementRuleBinding(namespace, name string, clusters []string, policies ...string) string {
	var decisions, subjects strings.Builder
	for _, c := range clusters {
		fmt.Fprintf(&decisions, "\n  - {clusterName: %s, clusterNamespace: %s}", c, c)
	}
	for _, p := range policies {
		fmt.Fprintf(&subjects, "\n- {apiGroup: policy.open-cluster-management.io, kind: Policy, name: %s}", p)
	}
	return fmt.Sprintf(`
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: %[2]s, namespace: %[1]s}
spec: {schedulerName: test-writes-decisions}
status:
  decisions:%[3]s
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: %[2]s, namespace: %[1]s}
placementRef: {apiGroup: apps.open-cluster-management.io, kind: PlacementRule, name: %[2]s}
subjects:%[4]s
`, namespace, name, decisions.String(), subjects.String())
}

// PolicyDoc is the YAML of an inform root Policy namespace/name without
// templates, with annotations (for the placement webhook's tests).
func PolicyDoc(namespace, name string, annotations map[string]string) string {
	a := ""
	for k, v := range annotations {
		a += fmt.Sprintf("\n    %s: %q", k, v)
	}
	if a == "" {
		a = " {}"
	}
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: %s
  namespace: %s
  annotations:%s
spec:
  disabled: false
  remediationAction: inform
  policy-templates: []
`, name, namespace, a)
}
