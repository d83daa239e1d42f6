package view

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// The OCM annotations a policy is counted by.
const (
	StandardsAnnotation  = "policy.open-cluster-management.io/standards"
	CategoriesAnnotation = "policy.open-cluster-management.io/categories"
	ControlsAnnotation   = "policy.open-cluster-management.io/controls"
)

// Unknown is the state shown for a cluster or policy with no compliance yet.
const Unknown = "NoStatus"

// State is a compliance state as the console shows it: the API's value, or
// Unknown when there is none.
func State(s policyv1.ComplianceState) string {
	if s == "" {
		return Unknown
	}
	return string(s)
}

// Rank orders states worst first: NonCompliant 0, Pending 1, no report 2,
// Compliant 3 (anything else, such as Terminating, ranks with no report).
func Rank(s policyv1.ComplianceState) int {
	switch s {
	case policyv1.NonCompliant:
		return 0
	case policyv1.Pending:
		return 1
	case policyv1.Compliant:
		return 3
	}
	return 2
}

// Counts are clusters (or policies) by state.
type Counts struct {
	NonCompliant int `json:"nonCompliant"`
	Pending      int `json:"pending"`
	Unknown      int `json:"noStatus"`
	Compliant    int `json:"compliant"`
}

// Add counts one more in state s.
func (c *Counts) Add(s policyv1.ComplianceState) {
	switch Rank(s) {
	case 0:
		c.NonCompliant++
	case 1:
		c.Pending++
	case 3:
		c.Compliant++
	default:
		c.Unknown++
	}
}

// Total is every state's count.
func (c Counts) Total() int { return c.NonCompliant + c.Pending + c.Unknown + c.Compliant }

// Worst is the worst state counted ("" when none or no report only).
func (c Counts) Worst() policyv1.ComplianceState {
	switch {
	case c.NonCompliant > 0:
		return policyv1.NonCompliant
	case c.Pending > 0:
		return policyv1.Pending
	case c.Unknown > 0 || c.Total() == 0:
		return ""
	}
	return policyv1.Compliant
}

// PolicyRow is one root policy on the fleet page.
type PolicyRow struct {
	Namespace         string                   `json:"namespace"`
	Name              string                   `json:"name"`
	Compliant         policyv1.ComplianceState `json:"compliant"`
	RemediationAction string                   `json:"remediationAction"`
	RolloutStatus     policyv1.RolloutStatus   `json:"rolloutStatus,omitempty"`
	Disabled          bool                     `json:"disabled"`
	Clusters          Counts                   `json:"clusters"`
	Standards         []string                 `json:"standards,omitempty"`
	Categories        []string                 `json:"categories,omitempty"`
	Controls          []string                 `json:"controls,omitempty"`
	PolicySets        []string                 `json:"policySets,omitempty"`
}

// ClusterRow is one cluster on the fleet page: its policies by state.
type ClusterRow struct {
	Name     string `json:"name"`
	Policies Counts `json:"policies"`
}

// GroupCount is the policies of one annotation value or PolicySet, by state.
type GroupCount struct {
	Name     string `json:"name"`
	Policies Counts `json:"policies"`
}

// FleetModel is the fleet page.
type FleetModel struct {
	Policies []PolicyRow  `json:"policies"`
	Clusters []ClusterRow `json:"clusters"`
	// Total counts the policies by their root compliance.
	Total      Counts       `json:"total"`
	Standards  []GroupCount `json:"standards"`
	Categories []GroupCount `json:"categories"`
	Controls   []GroupCount `json:"controls"`
	PolicySets []GroupCount `json:"policySets"`
	Pairs      Counts       `json:"policyClusterPairs"`
}

// SplitAnnotation is a comma-separated annotation's values, trimmed, without
// empty or repeated ones, in order.
func SplitAnnotation(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Fleet builds the fleet page from root policies (replicas, which carry the
// root-policy label, must not be among them) and the PolicySets of their
// namespaces.
func Fleet(roots []*policyv1.Policy, sets []*policyv1beta1.PolicySet) FleetModel {
	setsOf := map[string][]string{} // namespace/policy -> sets
	for _, s := range sets {
		for _, p := range s.Spec.Policies {
			k := s.Namespace + "/" + string(p)
			setsOf[k] = append(setsOf[k], s.Name)
		}
	}
	var m FleetModel
	clusters := map[string]*ClusterRow{}
	standards, categories, controls, bySet := map[string]*Counts{}, map[string]*Counts{}, map[string]*Counts{}, map[string]*Counts{}
	count := func(into map[string]*Counts, names []string, s policyv1.ComplianceState) {
		for _, n := range names {
			c := into[n]
			if c == nil {
				c = &Counts{}
				into[n] = c
			}
			c.Add(s)
		}
	}
	for _, s := range sets {
		if k := s.Namespace + "/" + s.Name; bySet[k] == nil {
			bySet[k] = &Counts{}
		}
	}
	for _, p := range roots {
		row := PolicyRow{
			Namespace: p.Namespace, Name: p.Name, Compliant: p.Status.ComplianceState,
			RemediationAction: string(p.Spec.RemediationAction), RolloutStatus: p.Status.RolloutStatus,
			Disabled:   p.Spec.Disabled,
			Standards:  SplitAnnotation(p.Annotations[StandardsAnnotation]),
			Categories: SplitAnnotation(p.Annotations[CategoriesAnnotation]),
			Controls:   SplitAnnotation(p.Annotations[ControlsAnnotation]),
		}
		if names := setsOf[p.Namespace+"/"+p.Name]; len(names) > 0 {
			row.PolicySets = slices.Sorted(slices.Values(names))
			row.PolicySets = slices.Compact(row.PolicySets)
		}
		for _, e := range p.Status.Status {
			if e == nil || e.ClusterName == "" {
				continue
			}
			row.Clusters.Add(e.ComplianceState)
			m.Pairs.Add(e.ComplianceState)
			c := clusters[e.ClusterName]
			if c == nil {
				c = &ClusterRow{Name: e.ClusterName}
				clusters[e.ClusterName] = c
			}
			c.Policies.Add(e.ComplianceState)
		}
		m.Total.Add(row.Compliant)
		count(standards, row.Standards, row.Compliant)
		count(categories, row.Categories, row.Compliant)
		count(controls, row.Controls, row.Compliant)
		setKeys := make([]string, len(row.PolicySets))
		for i, name := range row.PolicySets {
			setKeys[i] = p.Namespace + "/" + name
		}
		count(bySet, setKeys, row.Compliant)
		m.Policies = append(m.Policies, row)
	}
	slices.SortFunc(m.Policies, func(a, b PolicyRow) int {
		return cmp.Or(cmp.Compare(Rank(a.Compliant), Rank(b.Compliant)),
			cmp.Compare(b.Clusters.NonCompliant, a.Clusters.NonCompliant),
			cmp.Compare(b.Clusters.Pending, a.Clusters.Pending),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	m.Clusters = make([]ClusterRow, 0, len(clusters))
	for _, c := range clusters {
		m.Clusters = append(m.Clusters, *c)
	}
	slices.SortFunc(m.Clusters, func(a, b ClusterRow) int {
		return cmp.Or(cmp.Compare(Rank(a.Policies.Worst()), Rank(b.Policies.Worst())),
			cmp.Compare(b.Policies.NonCompliant, a.Policies.NonCompliant),
			cmp.Compare(b.Policies.Pending, a.Policies.Pending), cmp.Compare(a.Name, b.Name))
	})
	m.Standards, m.Categories, m.Controls, m.PolicySets = groups(standards), groups(categories), groups(controls), groups(bySet)
	return m
}

// groups lists counts worst first (most non-compliant policies), then by name.
func groups(in map[string]*Counts) []GroupCount {
	out := make([]GroupCount, 0, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		out = append(out, GroupCount{Name: name, Policies: *in[name]})
	}
	slices.SortStableFunc(out, func(a, b GroupCount) int {
		return cmp.Or(cmp.Compare(b.Policies.NonCompliant, a.Policies.NonCompliant), cmp.Compare(b.Policies.Pending, a.Policies.Pending))
	})
	return out
}

// ClusterLine is one cluster of a policy page.
type ClusterLine struct {
	Cluster       string                   `json:"cluster"`
	Compliant     policyv1.ComplianceState `json:"compliant"`
	RolloutStatus policyv1.RolloutStatus   `json:"rolloutStatus,omitempty"`
	Since         string                   `json:"rolloutSince,omitempty"`
	// Why is, for a Pending cluster whose replica was read, each Pending
	// template's newest message (PendingWhy).
	Why string `json:"why,omitempty"`
}

// PendingWhy is why a replica is Pending: each Pending template's newest
// compliance message ("Dependencies were not satisfied: ..."), as
// "<template>: <message>", joined by "; ".
func PendingWhy(replica *policyv1.Policy) string {
	var parts []string
	for _, d := range replica.Status.Details {
		if d == nil || d.ComplianceState != policyv1.Pending {
			continue
		}
		msg := "Pending"
		if len(d.History) > 0 {
			msg = d.History[0].Message
		}
		parts = append(parts, d.TemplateMeta.Name+": "+msg)
	}
	return strings.Join(parts, "; ")
}

// PolicyClusters is a root's per-cluster lines, worst first, then by name.
func PolicyClusters(root *policyv1.Policy) []ClusterLine {
	out := make([]ClusterLine, 0, len(root.Status.Status))
	for _, e := range root.Status.Status {
		if e == nil || e.ClusterName == "" {
			continue
		}
		l := ClusterLine{Cluster: e.ClusterName, Compliant: e.ComplianceState, RolloutStatus: e.RolloutStatus}
		if e.RolloutLastTransitionTime != nil {
			l.Since = e.RolloutLastTransitionTime.UTC().Format("2006-01-02T15:04:05Z")
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b ClusterLine) int {
		return cmp.Or(cmp.Compare(Rank(a.Compliant), Rank(b.Compliant)), cmp.Compare(a.Cluster, b.Cluster))
	})
	return out
}

// Paging is where a page sits in a list.
type Paging struct {
	Page, Pages, Size, Total, From, To int
}

// Page returns items' page number page (1-based, clamped to the pages there
// are) of size items (size clamped to 1..maxSize), and where it sits.
func Page[T any](items []T, page, size, maxSize int) ([]T, Paging) {
	size = min(max(size, 1), maxSize)
	pages := max((len(items)+size-1)/size, 1)
	page = min(max(page, 1), pages)
	from := min((page-1)*size, len(items))
	to := min(from+size, len(items))
	return items[from:to], Paging{Page: page, Pages: pages, Size: size, Total: len(items), From: from + 1, To: to}
}

// MatrixModel is policies × clusters: one row per policy, one cell per
// cluster, the cluster's compliance with that policy ("" when the policy is
// not on the cluster).
type MatrixModel struct {
	Clusters []string
	Rows     []MatrixRow
}

// MatrixRow is one policy's cells, in the order of MatrixModel.Clusters.
type MatrixRow struct {
	Namespace, Name string
	Cells           []MatrixCell
}

// MatrixCell is one policy on one cluster.
type MatrixCell struct {
	Bound bool
	State policyv1.ComplianceState
}

// Matrix is the given policies (rows, in their order) × the given clusters
// (columns, in their order) from the roots' status: each root's status is
// read once, whatever the number of clusters it holds.
func Matrix(roots []*policyv1.Policy, policies []PolicyRow, clusters []string) MatrixModel {
	byName := make(map[string]*policyv1.Policy, len(roots))
	for _, p := range roots {
		byName[p.Namespace+"/"+p.Name] = p
	}
	column := make(map[string]int, len(clusters))
	for i, c := range clusters {
		column[c] = i
	}
	m := MatrixModel{Clusters: clusters, Rows: make([]MatrixRow, 0, len(policies))}
	for _, row := range policies {
		r := MatrixRow{Namespace: row.Namespace, Name: row.Name, Cells: make([]MatrixCell, len(clusters))}
		if p := byName[row.Namespace+"/"+row.Name]; p != nil {
			for _, e := range p.Status.Status {
				if e == nil {
					continue
				}
				if i, ok := column[e.ClusterName]; ok {
					r.Cells[i] = MatrixCell{Bound: true, State: e.ComplianceState}
				}
			}
		}
		m.Rows = append(m.Rows, r)
	}
	return m
}
