package scheduling

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// maxDecisionsPerObject is how many decisions OCM's scheduler writes into one
// PlacementDecision.
const maxDecisionsPerObject = 100

// The patterns the Placement CRD applies.
var (
	groupNamePattern                = regexp.MustCompile(`^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$`)
	clustersPerDecisionGroupPattern = regexp.MustCompile(`^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$`)
)

// Input is one Placement and the hub state it is scheduled against.
type Input struct {
	Placement *clusterv1beta1.Placement
	// Clusters are the hub's ManagedClusters.
	Clusters []clusterv1.ManagedCluster
	// ClusterSetBindingsKnown says that ClusterSets and ClusterSetBindings are
	// the hub's (OCM's rule applies); otherwise every cluster set is assumed bound
	// to the placement's namespace (see the package documentation).
	ClusterSetBindingsKnown bool
	ClusterSets             []clusterv1beta2.ManagedClusterSet
	// ClusterSetBindings may hold bindings of any namespace; those of the
	// placement's namespace count.
	ClusterSetBindings []clusterv1beta2.ManagedClusterSetBinding
	// Now is the time tolerationSeconds are measured against.
	Now time.Time
}

// Result is what OCM's scheduler writes for the placement.
type Result struct {
	// Decisions are the PlacementDecisions, in name order of k.
	Decisions []clusterv1beta1.PlacementDecision
	// Groups are the placement's status.decisionGroups.
	Groups []clusterv1beta1.DecisionGroupStatus
	// NumberOfSelectedClusters is the placement's status.numberOfSelectedClusters.
	NumberOfSelectedClusters int32
	// Notes say where the offline schedule may differ from the hub's, each
	// naming the field concerned (reasons NoteClusterSetAssumed,
	// NoteTakenInNameOrder).
	Notes []rollout.Note
}

// The reasons of the notes of Schedule.
const (
	// NoteClusterSetAssumed: a ManagedClusterSet of spec.clusterSets is not in
	// the input and is assumed to exist, bound, with its default selector.
	NoteClusterSetAssumed rollout.NoteReason = "ClusterSetAssumed"
	// NoteTakenInNameOrder: spec.numberOfClusters takes fewer clusters than are
	// feasible, in name order, where the hub's prioritizers may choose others.
	NoteTakenInNameOrder rollout.NoteReason = "TakenInNameOrder"
)

// Schedule computes the PlacementDecisions of in.Placement. See the package
// documentation for the rules; errors name fields of the Placement.
func Schedule(in Input) (Result, error) {
	p := in.Placement
	if p == nil {
		return Result{}, fmt.Errorf("no Placement to schedule")
	}
	spec := field.NewPath("spec")
	var errs field.ErrorList

	predicates, predicateErrs := compilePredicates(p.Spec.Predicates, spec.Child("predicates"))
	errs = append(errs, predicateErrs...)
	errs = append(errs, validateTolerations(p.Spec.Tolerations, spec.Child("tolerations"))...)
	if n := p.Spec.NumberOfClusters; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(spec.Child("numberOfClusters"), *n, "must not be negative"))
	}
	strategyPath := spec.Child("decisionStrategy", "groupStrategy")
	groupSelectors, groupErrs := compileGroups(p.Spec.DecisionStrategy.GroupStrategy.DecisionGroups, strategyPath.Child("decisionGroups"))
	errs = append(errs, groupErrs...)
	errs = append(errs, validateGroupLength(p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup, strategyPath.Child("clustersPerDecisionGroup"))...)
	eligible, notes, setErrs := eligibleClusters(in)
	errs = append(errs, setErrs...)
	if len(errs) > 0 {
		return Result{}, errs.ToAggregate()
	}

	var feasible []*clusterv1.ManagedCluster
	for _, c := range eligible {
		if matchesAny(predicates, c) && tolerated(c, p.Spec.Tolerations, in.Now) {
			feasible = append(feasible, c)
		}
	}
	// Every score is equal offline: OCM's order is then the name.
	slices.SortFunc(feasible, func(a, b *clusterv1.ManagedCluster) int { return cmp.Compare(a.Name, b.Name) })
	selected := feasible
	if n := p.Spec.NumberOfClusters; n != nil && int(*n) < len(feasible) {
		selected = feasible[:*n]
		notes = append(notes, rollout.Note{Field: spec.Child("numberOfClusters").String(), Reason: NoteTakenInNameOrder, Message: fmt.Sprintf(
			"%d of the %d feasible clusters are taken in name order; "+
				"the hub's prioritizers (Balance over other placements' decisions, Steady, resource and add-on scores) may choose others",
			*n, len(feasible))})
	}

	groups := divideIntoGroups(selected, groupSelectors, groupLength(p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup, len(selected)))
	res := Result{NumberOfSelectedClusters: int32(len(selected)), Notes: notes}
	k := 1
	for index, g := range groups {
		status := clusterv1beta1.DecisionGroupStatus{
			DecisionGroupIndex: int32(index),
			DecisionGroupName:  g.name,
			Decisions:          []string{},
			ClustersCount:      int32(len(g.clusters)),
		}
		for start := 0; start == 0 || start < len(g.clusters); start += maxDecisionsPerObject {
			chunk := g.clusters[start:min(start+maxDecisionsPerObject, len(g.clusters))]
			d := newDecision(p, k, g.name, index, chunk)
			res.Decisions = append(res.Decisions, d)
			status.Decisions = append(status.Decisions, d.Name)
			k++
		}
		res.Groups = append(res.Groups, status)
	}
	return res, nil
}

// selector is a compiled label and claim selector.
type selector struct {
	labels labels.Selector
	claims labels.Selector
}

func (s selector) matches(c *clusterv1.ManagedCluster) bool {
	if !s.labels.Matches(labels.Set(c.Labels)) {
		return false
	}
	claims := make(labels.Set, len(c.Status.ClusterClaims))
	for _, claim := range c.Status.ClusterClaims {
		claims[claim.Name] = claim.Value
	}
	return s.claims.Matches(claims)
}

func compileSelector(labelSelector metav1.LabelSelector, claimSelector clusterv1beta1.ClusterClaimSelector, path *field.Path) (selector, field.ErrorList) {
	var errs field.ErrorList
	byLabel, err := metav1.LabelSelectorAsSelector(&labelSelector)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("labelSelector"), field.OmitValueType{}, err.Error()))
	}
	byClaim, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchExpressions: claimSelector.MatchExpressions})
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("claimSelector"), field.OmitValueType{}, err.Error()))
	}
	return selector{labels: byLabel, claims: byClaim}, errs
}

func compilePredicates(predicates []clusterv1beta1.ClusterPredicate, path *field.Path) ([]selector, field.ErrorList) {
	var out []selector
	var errs field.ErrorList
	for i, pred := range predicates {
		p := path.Index(i).Child("requiredClusterSelector")
		s, selErrs := compileSelector(pred.RequiredClusterSelector.LabelSelector, pred.RequiredClusterSelector.ClaimSelector, p)
		errs = append(errs, selErrs...)
		if len(pred.RequiredClusterSelector.CelSelector.CelExpressions) > 0 {
			errs = append(errs, field.Forbidden(p.Child("celSelector", "celExpressions"),
				"CEL selectors are not evaluated offline; export the placement's PlacementDecisions from the hub instead"))
		}
		out = append(out, s)
	}
	return out, errs
}

// matchesAny reports whether a cluster matches one of the predicates, or there
// are none.
func matchesAny(predicates []selector, c *clusterv1.ManagedCluster) bool {
	if len(predicates) == 0 {
		return true
	}
	for _, s := range predicates {
		if s.matches(c) {
			return true
		}
	}
	return false
}

func validateTolerations(tolerations []clusterv1beta1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		if t.Key == "" && t.Operator != clusterv1beta1.TolerationOpExists {
			errs = append(errs, field.Invalid(path.Index(i).Child("operator"), string(t.Operator), "must be Exists when the key is empty"))
		}
		if t.Operator == clusterv1beta1.TolerationOpExists && t.Value != "" {
			errs = append(errs, field.Invalid(path.Index(i).Child("value"), t.Value, "must be empty when the operator is Exists"))
		}
	}
	return errs
}

// tolerated reports whether the placement's tolerations let it select c, on a
// fresh schedule at now.
func tolerated(c *clusterv1.ManagedCluster, tolerations []clusterv1beta1.Toleration, now time.Time) bool {
	for _, taint := range c.Spec.Taints {
		if taint.Effect == clusterv1.TaintEffectPreferNoSelect {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(t clusterv1beta1.Toleration) bool { return tolerates(t, taint, now) }) {
			return false
		}
	}
	return true
}

func tolerates(t clusterv1beta1.Toleration, taint clusterv1.Taint, now time.Time) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", clusterv1beta1.TolerationOpEqual:
		if t.Value != taint.Value {
			return false
		}
	case clusterv1beta1.TolerationOpExists:
	default:
		return false
	}
	if t.TolerationSeconds == nil {
		return true
	}
	return now.Before(taint.TimeAdded.Add(time.Duration(*t.TolerationSeconds) * time.Second))
}

// groupSelector is one decisionGroups entry, compiled.
type groupSelector struct {
	name     string
	selector selector
}

func compileGroups(groups []clusterv1beta1.DecisionGroup, path *field.Path) ([]groupSelector, field.ErrorList) {
	var out []groupSelector
	var errs field.ErrorList
	for i, g := range groups {
		p := path.Index(i)
		if !groupNamePattern.MatchString(g.GroupName) {
			errs = append(errs, field.Invalid(p.Child("groupName"), g.GroupName, "must match "+groupNamePattern.String()))
		}
		s, selErrs := compileSelector(g.ClusterSelector.LabelSelector, g.ClusterSelector.ClaimSelector, p.Child("groupClusterSelector"))
		errs = append(errs, selErrs...)
		out = append(out, groupSelector{name: g.GroupName, selector: s})
	}
	return out, errs
}

func validateGroupLength(v intstr.IntOrString, path *field.Path) field.ErrorList {
	if v.Type != intstr.String {
		return nil
	}
	if !clustersPerDecisionGroupPattern.MatchString(v.StrVal) {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be a whole number from 1, or a percentage from 1% to 100% (pattern "+
			clustersPerDecisionGroupPattern.String()+")")}
	}
	if !strings.HasSuffix(v.StrVal, "%") {
		return field.ErrorList{field.Invalid(path, v.StrVal, "a number written as a string is not a percentage: "+
			"OCM's scheduler marks the placement misconfigured and selects no cluster; write it without quotes")}
	}
	return nil
}

// groupLength is OCM's number of clusters per decision group, for a
// clustersPerDecisionGroup validateGroupLength accepted.
func groupLength(v intstr.IntOrString, total int) int {
	length := total
	switch {
	case v.Type == intstr.Int:
		length = int(v.IntVal)
	default:
		pct, _ := strconv.ParseFloat(strings.TrimSuffix(v.StrVal, "%"), 64)
		length = int(math.Ceil(pct / 100 * float64(total)))
	}
	if length <= 0 || length > total {
		return total
	}
	return length
}

// decisionGroup is one group of selected clusters, sorted by name.
type decisionGroup struct {
	name     string
	clusters []string
}

// divideIntoGroups groups the selected clusters: each decisionGroups entry takes
// the clusters still ungrouped that it matches, the rest go to unnamed groups,
// each cut into groups of at most length clusters; with no cluster, one empty
// group.
func divideIntoGroups(selected []*clusterv1.ManagedCluster, selectors []groupSelector, length int) []decisionGroup {
	var groups []decisionGroup
	rest := selected
	for _, gs := range selectors {
		var matched []string
		remaining := rest[:0:0]
		for _, c := range rest {
			if gs.selector.matches(c) {
				matched = append(matched, c.Name)
			} else {
				remaining = append(remaining, c)
			}
		}
		rest = remaining
		groups = append(groups, chunk(gs.name, matched, length)...)
	}
	leftover := make([]string, 0, len(rest))
	for _, c := range rest {
		leftover = append(leftover, c.Name)
	}
	groups = append(groups, chunk("", leftover, length)...)
	if len(groups) == 0 {
		groups = append(groups, decisionGroup{})
	}
	return groups
}

// chunk sorts clusters and cuts them into groups of at most length, all named
// name.
func chunk(name string, clusters []string, length int) []decisionGroup {
	slices.Sort(clusters)
	var groups []decisionGroup
	for start := 0; start < len(clusters); start += length {
		groups = append(groups, decisionGroup{name: name, clusters: clusters[start:min(start+length, len(clusters))]})
	}
	return groups
}

// newDecision is the k-th PlacementDecision of p, for part of a decision group.
func newDecision(p *clusterv1beta1.Placement, k int, groupName string, groupIndex int, clusters []string) clusterv1beta1.PlacementDecision {
	d := clusterv1beta1.PlacementDecision{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "PlacementDecision"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-decision-%d", p.Name, k),
			Namespace: p.Namespace,
			Labels: map[string]string{
				clusterv1beta1.PlacementLabel:          p.Name,
				clusterv1beta1.DecisionGroupNameLabel:  groupName,
				clusterv1beta1.DecisionGroupIndexLabel: strconv.Itoa(groupIndex),
			},
		},
		Status: clusterv1beta1.PlacementDecisionStatus{Decisions: make([]clusterv1beta1.ClusterDecision, 0, len(clusters))},
	}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}
