package dependency

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// Edge says that From waits for To.
type Edge struct {
	From, To Ref
	// Compliance is the state From waits for; empty for the edges from a Policy
	// to its templates and from a PolicySet to its members, which wait for
	// compliance.
	Compliance policyv1.ComplianceState
	// Policy and Field locate the dependency that declared the edge; both are
	// zero (Field nil) for the edges from a Policy to its templates and from a
	// PolicySet to its members.
	Policy types.NamespacedName
	Field  *field.Path
}

// declared reports whether a dependency field declared the edge.
func (e Edge) declared() bool { return e.Field != nil }

// edgeKey identifies an edge by value, its field by its path written out.
type edgeKey struct {
	from, to   Ref
	compliance policyv1.ComplianceState
	policy     types.NamespacedName
	field      string
}

func (e Edge) key() edgeKey {
	return edgeKey{from: e.From, to: e.To, compliance: e.Compliance, policy: e.Policy, field: e.Field.String()}
}

// Graph is the "waits for" graph of a set of Policies and PolicySets. Its nodes
// are the Policies, their templates and the PolicySets; a template waits for its
// requirements, a Policy for its templates (except those with ignorePending), a
// PolicySet for its members.
type Graph struct {
	refs  []Ref       // nodes, in the order they were given
	index map[Ref]int // node -> position in refs
	out   [][]int     // out[u]: nodes u waits for, ascending, without duplicates
	edges map[[2]int]Edge
	// issues, unresolved: see Issues and Unresolved.
	issues     []Issue
	unresolved []Edge
}

// Build makes the graph of the given Policies and PolicySets (nil entries are
// skipped). Nodes are numbered in the order given: each Policy followed by its
// templates, then the PolicySets; this order breaks every tie in the results.
func Build(policies []*policyv1.Policy, sets []*policyv1beta1.PolicySet) *Graph {
	g := &Graph{index: map[Ref]int{}, edges: map[[2]int]Edge{}}
	templates := make([][]int, len(policies))
	for i, p := range policies {
		if p == nil {
			continue
		}
		g.node(ObjectRef(policyv1.GroupVersion.String(), kindPolicy, p.Namespace, p.Name))
		for t, tmpl := range p.Spec.PolicyTemplates {
			templates[i] = append(templates[i], g.node(templateRef(p, t, tmpl)))
		}
	}
	for _, set := range sets {
		if set != nil {
			g.node(ObjectRef(policyv1beta1.GroupVersion.String(), kindPolicySet, set.Namespace, set.Name))
		}
	}

	index := IndexPolicySets(sets)
	seenIssue := map[string]bool{}
	addIssues := func(issues ...Issue) {
		for _, is := range issues {
			if key := is.String(); !seenIssue[key] {
				seenIssue[key] = true
				g.issues = append(g.issues, is)
			}
		}
	}
	seenUnresolved := map[edgeKey]bool{}
	for i, p := range policies {
		if p == nil {
			continue
		}
		addIssues(Validate(p)...)
		self := g.index[ObjectRef(policyv1.GroupVersion.String(), kindPolicy, p.Namespace, p.Name)]
		base, issues := addRequirements(nil, policyDeclarations(p), p, index)
		addIssues(issues...)
		for t, tmpl := range p.Spec.PolicyTemplates {
			node := templates[i][t]
			if tmpl == nil || !tmpl.IgnorePending {
				g.edge(Edge{From: g.refs[self], To: g.refs[node]})
			}
			reqs, issues := addRequirements(base, templateDeclarations(p, t), p, index)
			addIssues(issues...)
			for _, req := range reqs {
				e := Edge{From: g.refs[node], To: req.Target, Compliance: req.Compliance, Policy: policyKey(p), Field: req.Field}
				target, known := g.index[req.Target]
				switch {
				case !known:
					// Reported from the policy: a policy-level field is unresolved
					// for every template alike.
					e.From = g.refs[self]
					if !seenUnresolved[e.key()] {
						seenUnresolved[e.key()] = true
						g.unresolved = append(g.unresolved, e)
					}
				case target == self:
					addIssues(Issue{Policy: e.Policy, Problem: field.Forbidden(e.Field,
						fmt.Sprintf("self-dependency: the policy waits for itself (%s)", req.Target))})
				case target == node:
					addIssues(Issue{Policy: e.Policy, Problem: field.Forbidden(e.Field, selfTemplateMessage(req))})
				default:
					g.edge(e)
				}
			}
		}
	}
	for _, set := range sets {
		if set == nil {
			continue
		}
		from := ObjectRef(policyv1beta1.GroupVersion.String(), kindPolicySet, set.Namespace, set.Name)
		for _, member := range set.Spec.Policies {
			to := ObjectRef(policyv1.GroupVersion.String(), kindPolicy, set.Namespace, string(member))
			if _, known := g.index[to]; known {
				g.edge(Edge{From: from, To: to})
			}
		}
	}
	return g
}

func selfTemplateMessage(req Requirement) string {
	msg := fmt.Sprintf("self-dependency: %s waits for itself", req.Target)
	if strings.HasPrefix(req.Field.String(), fieldDependencies.String()+"[") {
		msg += " (spec.dependencies apply to every template of the policy, this one included)"
	}
	return msg
}

// node returns the number of ref, adding it if new.
func (g *Graph) node(ref Ref) int {
	if i, ok := g.index[ref]; ok {
		return i
	}
	g.index[ref] = len(g.refs)
	g.refs = append(g.refs, ref)
	g.out = append(g.out, nil)
	return len(g.refs) - 1
}

// edge adds e between two known nodes; the first edge between two nodes is the
// one kept, and an edge from a node to itself is dropped.
func (g *Graph) edge(e Edge) {
	from, to := g.index[e.From], g.index[e.To]
	key := [2]int{from, to}
	if _, dup := g.edges[key]; dup || from == to {
		return
	}
	g.edges[key] = e
	i, _ := slices.BinarySearch(g.out[from], to)
	g.out[from] = slices.Insert(g.out[from], i, to)
}

// templateRef is the node of template number t of p: its identity
// (templateIdentity), or, when it has none, a placeholder unique to the slot.
func templateRef(p *policyv1.Policy, t int, tmpl *policyv1.PolicyTemplate) Ref {
	if ref, ok := templateIdentity(tmpl); ok {
		return ref
	}
	return Ref{Kind: "template", Name: fmt.Sprintf("%s/policy-templates[%d]", replicatedName(p.Namespace, p.Name), t)}
}

// templateIdentity is the Ref of the object a template's objectDefinition
// makes; false when the template is nil or its objectDefinition has no kind
// or no name.
func templateIdentity(tmpl *policyv1.PolicyTemplate) (Ref, bool) {
	def, ok := tmpl.DefinitionMeta()
	if !ok || def.Kind == "" || def.Name == "" {
		return Ref{}, false
	}
	return ObjectRef(def.APIVersion, def.Kind, def.Namespace, def.Name), true
}

// Issues returns the problems found while building: invalid dependency fields
// (Validate), conflicting compliance states (Requirements) and
// self-dependencies. Each is reported once, in the order the policies were
// given.
func (g *Graph) Issues() []Issue { return g.issues }

// Unresolved returns the declared dependencies whose target is not a node of the
// graph, once per policy and field, with From set to the declaring Policy.
func (g *Graph) Unresolved() []Edge { return g.unresolved }
