package view

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// Decided is one cluster a placement decided, whether the policy is bound
// there and, when it is not (or only through other bindings), why.
type Decided struct {
	Placement string `json:"placement"`
	Group     string `json:"group,omitempty"`
	Cluster   string `json:"cluster"`
	Bound     bool   `json:"bound"`
	Reason    string `json:"reason,omitempty"`
}

// Excluded is a cluster a placement decided (or a PolicySet names) that the
// policy does not go to, with the reason.
type Excluded = Decided

// Placement lists, for a root policy, every decision of its placements
// (decided: placement name -> decisions, as read from PlacementDecisions or a
// PlacementRule's status) with whether the root's status binds the cluster,
// and the clusters it excludes, each with the reason the root's status and
// PolicySets give: the policy is disabled; the placement policies' clusters
// annotation (clustersAnnotation) does not list the cluster, with the
// policies' own reasons when explained has them (cluster -> reasons, as the
// hub's /explain gives them); a PolicySet's
// spec.exclusions (with the set's reason) on every path; the hub found no
// ManagedCluster (the ClustersUnknown condition); otherwise no binding that
// binds the policy places it there (a restricted binding only enforces).
// Both lists are sorted by placement, group, cluster.
func Placement(root *policyv1.Policy, sets []*policyv1beta1.PolicySet, decided map[string][]Decided, clustersAnnotation string, explained map[string][]string) (all, excluded []Decided) {
	bound := map[string]*policyv1.CompliancePerClusterStatus{}
	for _, e := range root.Status.Status {
		if e != nil {
			bound[e.ClusterName] = e
		}
	}
	allowed, narrowed := map[string]bool{}, false
	if v, ok := root.Annotations[clustersAnnotation]; ok {
		narrowed = true
		for _, c := range SplitAnnotation(v) {
			allowed[c] = true
		}
	}
	unknown := ""
	for _, c := range root.Status.Conditions {
		if c.Type == "ClustersUnknown" && c.Status == "True" {
			unknown = c.Message
		}
	}
	setReason := map[string]string{} // set/cluster -> reason
	for _, s := range sets {
		if s.Namespace != root.Namespace {
			continue
		}
		for _, e := range s.Spec.Exclusions {
			if e.PolicyName != root.Name {
				continue
			}
			for _, c := range e.ClusterNames {
				setReason[s.Name+"/"+string(c)] = e.Reason
			}
		}
	}
	excludedBy := map[string][]string{} // cluster -> sets excluding it
	for _, e := range root.Status.Placement {
		if e == nil || e.PolicySet == "" {
			continue
		}
		for _, x := range e.Exclusions {
			if !slices.Contains(excludedBy[x.ClusterName], e.PolicySet) {
				excludedBy[x.ClusterName] = append(excludedBy[x.ClusterName], e.PolicySet)
			}
		}
	}
	setText := func(cluster string) string {
		var parts []string
		for _, set := range excludedBy[cluster] {
			t := "PolicySet " + set + " excludes it"
			if r := setReason[set+"/"+cluster]; r != "" {
				t += " (" + r + ")"
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, "; ")
	}
	seen := map[string]bool{}
	for placement, ds := range decided {
		for _, d := range ds {
			d.Placement = cmp.Or(d.Placement, placement)
			seen[d.Cluster] = true
			if e, ok := bound[d.Cluster]; ok {
				d.Bound = true
				if len(excludedBy[d.Cluster]) > 0 {
					var names []string
					for _, b := range e.RemainingBindings {
						names = append(names, b.PlacementBinding)
					}
					d.Reason = setText(d.Cluster) + "; still placed by " + strings.Join(names, ", ")
				}
				all = append(all, d)
				continue
			}
			switch {
			case root.Spec.Disabled:
				d.Reason = "the policy is disabled"
			case narrowed && !allowed[d.Cluster]:
				d.Reason = fmt.Sprintf("the placement policies do not allow it (%s lists %d cluster(s))", clustersAnnotation, len(allowed))
				if why := explained[d.Cluster]; len(why) > 0 {
					d.Reason = "the placement policies do not allow it: " + strings.Join(why, "; ")
				}
			case len(excludedBy[d.Cluster]) > 0:
				d.Reason = setText(d.Cluster)
			case unknown != "" && mentions(unknown, d.Cluster):
				d.Reason = "no ManagedCluster of that name: the hub writes no replica (ClustersUnknown)"
			default:
				d.Reason = "no binding that binds the policy places it here (a restricted binding enforces, never binds)"
			}
			all = append(all, d)
			excluded = append(excluded, d)
		}
	}
	for cluster := range excludedBy {
		if !seen[cluster] {
			excluded = append(excluded, Decided{Placement: "PolicySet", Cluster: cluster, Reason: setText(cluster) + " (no placement of the policy decides it)"})
		}
	}
	order := func(a, b Decided) int {
		return cmp.Or(cmp.Compare(a.Placement, b.Placement), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Cluster, b.Cluster))
	}
	slices.SortFunc(all, order)
	slices.SortFunc(excluded, order)
	return all, excluded
}

// mentions says whether a condition message names cluster as a whole word.
func mentions(message, cluster string) bool {
	for _, f := range strings.FieldsFunc(message, func(r rune) bool { return r == ' ' || r == ',' || r == ':' }) {
		if f == cluster {
			return true
		}
	}
	return false
}
