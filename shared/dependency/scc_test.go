package dependency

import (
	"fmt"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// withTemplate is a policy holding one ConfigurationPolicy: a Policy's
// dependencies gate its templates, so without one it waits for nothing.
func withTemplate(name string, deps []policyv1.PolicyDependency) *policyv1.Policy {
	return policy(name, deps, config(name+"-config"))
}

// TestStronglyConnected checks the components Cycles searches: nodes on no
// cycle are alone in theirs (Cycles skips them without further work), and the
// nodes of each cycle share one.
func TestStronglyConnected(t *testing.T) {
	cases := []struct {
		name     string
		policies []*policyv1.Policy
		// together are groups of policy names that must share a component
		// (with their templates); every other policy is on no cycle.
		together [][]string
	}{
		{"chain", []*policyv1.Policy{
			withTemplate("a", []policyv1.PolicyDependency{onPolicy("b", policyv1.Compliant)}),
			withTemplate("b", []policyv1.PolicyDependency{onPolicy("c", policyv1.Compliant)}),
			withTemplate("c", nil),
		}, nil},
		{"two cycles joined by an edge", []*policyv1.Policy{
			withTemplate("a", []policyv1.PolicyDependency{onPolicy("b", policyv1.Compliant)}),
			withTemplate("b", []policyv1.PolicyDependency{onPolicy("a", policyv1.Compliant), onPolicy("c", policyv1.Compliant)}),
			withTemplate("c", []policyv1.PolicyDependency{onPolicy("d", policyv1.Compliant)}),
			withTemplate("d", []policyv1.PolicyDependency{onPolicy("e", policyv1.Compliant)}),
			withTemplate("e", []policyv1.PolicyDependency{onPolicy("c", policyv1.Compliant)}),
			withTemplate("f", []policyv1.PolicyDependency{onPolicy("a", policyv1.Compliant)}),
		}, [][]string{{"a", "b"}, {"c", "d", "e"}}},
		{"diamond", []*policyv1.Policy{
			withTemplate("a", []policyv1.PolicyDependency{onPolicy("b", policyv1.Compliant), onPolicy("c", policyv1.Compliant)}),
			withTemplate("b", []policyv1.PolicyDependency{onPolicy("d", policyv1.Compliant)}),
			withTemplate("c", []policyv1.PolicyDependency{onPolicy("d", policyv1.Compliant)}),
			withTemplate("d", nil),
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Build(c.policies, nil)
			scc, size := g.stronglyConnected()
			node := func(name string) int {
				return g.index[ObjectRef(policyAPI, kindPolicy, "default", name)]
			}
			grouped := map[string]bool{}
			for _, group := range c.together {
				for _, name := range group {
					grouped[name] = true
					if scc[node(name)] != scc[node(group[0])] {
						t.Errorf("%s and %s are in different components", name, group[0])
					}
					// Each Policy shares its component with its template.
					if got := size[scc[node(name)]]; got != 2*len(group) {
						t.Errorf("the component of %s has %d nodes, want %d", name, got, 2*len(group))
					}
				}
			}
			for _, p := range c.policies {
				if !grouped[p.Name] && size[scc[node(p.Name)]] != 1 {
					t.Errorf("%s is on no cycle but shares a component of %d nodes", p.Name, size[scc[node(p.Name)]])
				}
			}
		})
	}
}

// BenchmarkCyclesWithoutCycles is the cost of the cycle search on 10,000
// Policies, each waiting for the next: linear (it was quadratic, 72 s).
func BenchmarkCyclesWithoutCycles(b *testing.B) {
	const n = 10000
	policies := make([]*policyv1.Policy, n)
	for i := range policies {
		var deps []policyv1.PolicyDependency
		if i+1 < n {
			deps = []policyv1.PolicyDependency{onPolicy(fmt.Sprintf("p%d", i+1), policyv1.Compliant)}
		}
		policies[i] = policy(fmt.Sprintf("p%d", i), deps)
	}
	g := Build(policies, nil)
	b.ResetTimer()
	for b.Loop() {
		if cycles := g.Cycles(); len(cycles) != 0 {
			b.Fatalf("%d cycles in a chain", len(cycles))
		}
	}
}
