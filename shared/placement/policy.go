package placement

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// The well-known names of the contract.
const (
	// Namespace is the namespace that holds the placement-policy ConfigMaps.
	Namespace = "fleetpolicy-placement"
	// LanguageLabel marks a ConfigMap of Namespace as a placement policy; its
	// value is the language of every entry of the ConfigMap's data.
	LanguageLabel = "fleetpolicy.io/placement-policy"
	// StatusAnnotation is the annotation that carries a ConfigMap's Status.
	StatusAnnotation = "fleetpolicy.io/placement-policy-status"
	// ClustersAnnotation restricts where the hub propagates a resource: the
	// comma-separated, sorted names of the clusters it may go to. Present and
	// empty means no cluster.
	ClustersAnnotation = binding.ClustersAnnotation
)

// Language is the language of a placement policy: the value of LanguageLabel.
type Language string

const (
	// Rego policies are Rego v1 modules of package fleetpolicy.placement.
	Rego Language = "rego"
	// CEL policies are CELPolicy documents.
	CEL Language = "cel"
)

// PolicyID names one placement policy: an entry of a ConfigMap's data. A
// problem with the ConfigMap as a whole has an empty Key.
type PolicyID struct {
	ConfigMap string
	Key       string
}

// String renders the ID as fleetpolicy-placement/<configmap>[<key>].
func (id PolicyID) String() string {
	s := Namespace + "/" + id.ConfigMap
	if id.Key != "" {
		s += "[" + id.Key + "]"
	}
	return s
}

func (id PolicyID) less(other PolicyID) bool {
	if id.ConfigMap != other.ConfigMap {
		return id.ConfigMap < other.ConfigMap
	}
	return id.Key < other.Key
}

// PolicyError is a placement policy that does not compile, or that failed while
// evaluating. Field, when set, is the part of the policy at fault (a CEL
// policy's match[0].expression, a Rego policy's annotations).
type PolicyError struct {
	Policy PolicyID
	Field  string
	Err    error
}

func (e *PolicyError) Error() string {
	s := "placement policy " + e.Policy.String()
	if e.Field != "" {
		s += " " + e.Field
	}
	return s + ": " + e.Err.Error()
}

func (e *PolicyError) Unwrap() error { return e.Err }

// detail is the error without the ConfigMap: "<key> <field>: <error>".
func (e *PolicyError) detail() string {
	s := e.Policy.Key
	if e.Field != "" {
		if s != "" {
			s += " "
		}
		s += e.Field
	}
	return s + ": " + e.Err.Error()
}

// Cluster is what a placement policy knows of a managed cluster: its labels and
// its claims (status.clusterClaims of the ManagedCluster, by name).
type Cluster struct {
	Name   string
	Labels map[string]string
	Claims map[string]string
}

// ClusterOf reads a ManagedCluster. A claim named twice keeps its last value,
// as the claim list is written by one agent in order.
func ClusterOf(mc *clusterv1.ManagedCluster) Cluster {
	c := Cluster{Name: mc.Name, Labels: map[string]string{}, Claims: map[string]string{}}
	for k, v := range mc.Labels {
		c.Labels[k] = v
	}
	for _, claim := range mc.Status.ClusterClaims {
		c.Claims[claim.Name] = claim.Value
	}
	return c
}

// Inventory is an immutable snapshot of the clusters, sorted by name.
type Inventory struct {
	clusters []Cluster
	index    map[string]int
}

// NewInventory returns the inventory of clusters. Every cluster needs a name,
// and a name appears once.
func NewInventory(clusters []Cluster) (*Inventory, error) {
	sorted := make([]Cluster, len(clusters))
	copy(sorted, clusters)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	inv := &Inventory{clusters: sorted, index: make(map[string]int, len(sorted))}
	for i, c := range sorted {
		if c.Name == "" {
			return nil, fmt.Errorf("cluster %d of the inventory has no name", i)
		}
		if _, dup := inv.index[c.Name]; dup {
			return nil, fmt.Errorf("cluster %q appears twice in the inventory", c.Name)
		}
		inv.index[c.Name] = i
	}
	return inv, nil
}

// Clusters returns the clusters, sorted by name. The caller must not change
// them.
func (inv *Inventory) Clusters() []Cluster { return inv.clusters }

// Cluster returns the named cluster.
func (inv *Inventory) Cluster(name string) (Cluster, bool) {
	i, ok := inv.index[name]
	if !ok {
		return Cluster{}, false
	}
	return inv.clusters[i], true
}

// with returns a copy of inv with c added or replaced.
func (inv *Inventory) with(c Cluster) (*Inventory, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("a cluster of the inventory has no name")
	}
	clusters := make([]Cluster, 0, len(inv.clusters)+1)
	for _, existing := range inv.clusters {
		if existing.Name != c.Name {
			clusters = append(clusters, existing)
		}
	}
	return NewInventory(append(clusters, c))
}

// without returns a copy of inv without the named cluster.
func (inv *Inventory) without(name string) *Inventory {
	clusters := make([]Cluster, 0, len(inv.clusters))
	for _, existing := range inv.clusters {
		if existing.Name != name {
			clusters = append(clusters, existing)
		}
	}
	out, _ := NewInventory(clusters) // names stay unique and non-empty
	return out
}

// ParseClusters reads a ClustersAnnotation value as binding.AllowedClusters
// does (names separated by commas, blanks around them ignored) and returns
// the names sorted, without duplicates.
func ParseClusters(value string) []string {
	allowed, _ := binding.AllowedClusters(map[string]string{ClustersAnnotation: value})
	return slices.Sorted(maps.Keys(allowed))
}

// FormatClusters renders names as a ClustersAnnotation value; names must be
// sorted and unique (as ParseClusters returns them).
func FormatClusters(names []string) string { return strings.Join(names, ",") }
