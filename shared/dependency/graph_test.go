package dependency

import (
	"fmt"
	"reflect"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

func deps(d ...policyv1.PolicyDependency) []policyv1.PolicyDependency { return d }

func TestGraph(t *testing.T) {
	const C = policyv1.Compliant
	cases := []struct {
		name           string
		policies       []*policyv1.Policy
		sets           []*policyv1beta1.PolicySet
		wantCycles     []string
		wantIssues     []string
		wantUnresolved []string
		wantOrder      []string // nil when the graph cannot be ordered
	}{
		{
			name: "a chain is ordered, dependencies first",
			policies: []*policyv1.Policy{
				policy("app", deps(onPolicy("setup", C)), config("app-cfg")),
				policy("setup", nil, config("ns-cfg"), config("quota-cfg", onConfig("ns-cfg", C))),
			},
			wantOrder: []string{"ConfigurationPolicy ns-cfg", "ConfigurationPolicy quota-cfg", "Policy default.setup",
				"ConfigurationPolicy app-cfg", "Policy default.app"},
		},
		{
			name: "two policies waiting for each other",
			policies: []*policyv1.Policy{
				policy("a", deps(onPolicy("b", C)), config("a-cfg")),
				policy("b", deps(onPolicy("a", C)), config("b-cfg")),
			},
			wantCycles: []string{"Policy default.a -> ConfigurationPolicy a-cfg -> Policy default.b -> ConfigurationPolicy b-cfg -> Policy default.a"},
		},
		{
			name: "three policies in a ring, declared in another order",
			policies: []*policyv1.Policy{
				policy("b", nil, config("b-cfg", onPolicy("c", C))),
				policy("c", nil, config("c-cfg", onPolicy("a", C))),
				policy("a", nil, config("a-cfg", onPolicy("b", C))),
			},
			wantCycles: []string{"Policy default.b -> ConfigurationPolicy b-cfg -> Policy default.c -> ConfigurationPolicy c-cfg -> Policy default.a -> ConfigurationPolicy a-cfg -> Policy default.b"},
		},
		{
			name: "sibling templates waiting for each other",
			policies: []*policyv1.Policy{
				policy("p", nil, config("x", onConfig("y", C)), config("y", onConfig("x", policyv1.NonCompliant))),
			},
			wantCycles: []string{"ConfigurationPolicy x -> ConfigurationPolicy y -> ConfigurationPolicy x"},
		},
		{
			name: "every elementary cycle of a tangle is reported",
			policies: []*policyv1.Policy{
				policy("p", nil,
					config("x", onConfig("y", C)),
					config("y", onConfig("x", C), onConfig("z", C)),
					config("z", onConfig("y", C), onConfig("x", C))),
			},
			wantCycles: []string{
				"ConfigurationPolicy x -> ConfigurationPolicy y -> ConfigurationPolicy x",
				"ConfigurationPolicy x -> ConfigurationPolicy y -> ConfigurationPolicy z -> ConfigurationPolicy x",
				"ConfigurationPolicy y -> ConfigurationPolicy z -> ConfigurationPolicy y",
			},
		},
		{
			name: "a cycle found only after a blocked node is released",
			policies: []*policyv1.Policy{
				policy("p", nil,
					config("x", onConfig("y", C), onConfig("z", C)),
					config("y", onConfig("x", C), onConfig("z", C)),
					config("z", onConfig("y", C))),
			},
			wantCycles: []string{
				"ConfigurationPolicy x -> ConfigurationPolicy y -> ConfigurationPolicy x",
				"ConfigurationPolicy x -> ConfigurationPolicy z -> ConfigurationPolicy y -> ConfigurationPolicy x",
				"ConfigurationPolicy y -> ConfigurationPolicy z -> ConfigurationPolicy y",
			},
		},
		{
			name: "independent cycles are all reported, in the order given",
			policies: []*policyv1.Policy{
				policy("p", nil, config("x", onConfig("y", C)), config("y", onConfig("x", C))),
				policy("q", nil, config("u", onConfig("v", C)), config("v", onConfig("u", C))),
				policy("r", nil, config("ok")),
			},
			wantCycles: []string{
				"ConfigurationPolicy x -> ConfigurationPolicy y -> ConfigurationPolicy x",
				"ConfigurationPolicy u -> ConfigurationPolicy v -> ConfigurationPolicy u",
			},
		},
		{
			name: "ignorePending breaks the wait of a policy for its template",
			policies: []*policyv1.Policy{
				policy("a", nil, ignoringPending(config("a-cfg", onPolicy("b", C))), config("a-base")),
				policy("b", deps(onPolicy("a", C)), config("b-cfg")),
			},
			wantOrder: []string{"ConfigurationPolicy a-base", "Policy default.a", "ConfigurationPolicy b-cfg",
				"Policy default.b", "ConfigurationPolicy a-cfg"},
		},
		{
			name: "a cycle through a policy set",
			policies: []*policyv1.Policy{
				policy("a", deps(onSet("base", C)), config("a-cfg")),
				policy("b", nil, config("b-cfg", onPolicy("a", C))),
			},
			sets:       []*policyv1beta1.PolicySet{policySet("base", "b")},
			wantCycles: []string{"Policy default.a -> ConfigurationPolicy a-cfg -> Policy default.b -> ConfigurationPolicy b-cfg -> Policy default.a"},
		},
		{
			name: "a policy set comes after its members",
			policies: []*policyv1.Policy{
				policy("a", nil, config("a-cfg")),
			},
			sets:      []*policyv1beta1.PolicySet{policySet("base", "a", "elsewhere")},
			wantOrder: []string{"ConfigurationPolicy a-cfg", "Policy default.a", "PolicySet default/base"},
		},
		{
			name: "self-dependencies are issues, not cycles",
			policies: []*policyv1.Policy{
				policy("p", deps(onPolicy("p", C)), config("x"), config("y", onConfig("y", C))),
				policy("q", deps(onConfig("q-first", C)), config("q-first"), config("q-second")),
			},
			wantIssues: []string{
				"Policy default/p: spec.dependencies[0]: Forbidden: self-dependency: the policy waits for itself (Policy default.p)",
				"Policy default/p: spec.policy-templates[1].extraDependencies[0]: Forbidden: self-dependency: ConfigurationPolicy y waits for itself",
				"Policy default/q: spec.dependencies[0]: Forbidden: self-dependency: ConfigurationPolicy q-first waits for itself (spec.dependencies apply to every template of the policy, this one included)",
			},
			wantOrder: []string{"ConfigurationPolicy x", "ConfigurationPolicy y", "Policy default.p",
				"ConfigurationPolicy q-first", "ConfigurationPolicy q-second", "Policy default.q"},
		},
		{
			name: "dependencies outside the graph are unresolved, once per field",
			policies: []*policyv1.Policy{
				policy("app", deps(onPolicy("infra.setup", C), onSet("missing", C)),
					config("one"), config("two", onConfig("elsewhere", policyv1.NonCompliant))),
			},
			wantUnresolved: []string{
				"Policy default/app spec.dependencies[0]: Policy default.app -> Policy infra.setup (Compliant)",
				"Policy default/app spec.dependencies[1]: Policy default.app -> PolicySet missing (Compliant)",
				"Policy default/app spec.policy-templates[1].extraDependencies[0]: Policy default.app -> ConfigurationPolicy elsewhere (NonCompliant)",
			},
			wantOrder: []string{"ConfigurationPolicy one", "ConfigurationPolicy two", "Policy default.app"},
		},
		{
			name: "invalid and conflicting dependencies are issues",
			policies: []*policyv1.Policy{
				policy("p", deps(onPolicy("a", C), onPolicy("a", policyv1.NonCompliant)), config("x", policyv1.PolicyDependency{Kind: "Policy", Compliance: "Yes"})),
				policy("a", nil),
				nil,
			},
			wantIssues: []string{
				"Policy default/p: spec.policy-templates[0].extraDependencies[0].name: Required value",
				`Policy default/p: spec.policy-templates[0].extraDependencies[0].compliance: Unsupported value: "Yes": supported values: "Compliant", "NonCompliant", "Pending"`,
				`Policy default/p: spec.dependencies[1].compliance: Invalid value: "NonCompliant": dependency on Policy default.a is declared with compliance Compliant at spec.dependencies[0], which applies`,
			},
			wantOrder: []string{"Policy default.a", "ConfigurationPolicy x", "Policy default.p"},
		},
		{
			name: "a template without kind or name still takes part",
			policies: []*policyv1.Policy{
				policy("p", deps(onPolicy("q", C)), &policyv1.PolicyTemplate{}),
				policy("q", nil, nil),
			},
			wantOrder: []string{"template default.q/policy-templates[0]", "Policy default.q", "template default.p/policy-templates[0]", "Policy default.p"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := Build(tc.policies, tc.sets)
			var cycles, issues, unresolved []string
			for _, c := range g.Cycles() {
				cycles = append(cycles, c.Path())
			}
			for _, is := range g.Issues() {
				issues = append(issues, is.String())
			}
			for _, e := range g.Unresolved() {
				unresolved = append(unresolved, fmt.Sprintf("Policy %s %s: %s -> %s (%s)", e.Policy, e.Field, e.From, e.To, e.Compliance))
			}
			order, ordered := g.ApplyOrder()
			if !reflect.DeepEqual(cycles, tc.wantCycles) {
				t.Errorf("cycles:\n got  %q\n want %q", cycles, tc.wantCycles)
			}
			if !reflect.DeepEqual(issues, tc.wantIssues) {
				t.Errorf("issues:\n got  %q\n want %q", issues, tc.wantIssues)
			}
			if !reflect.DeepEqual(unresolved, tc.wantUnresolved) {
				t.Errorf("unresolved:\n got  %q\n want %q", unresolved, tc.wantUnresolved)
			}
			if ordered != (tc.wantOrder != nil) {
				t.Errorf("ApplyOrder ok = %v, want %v", ordered, tc.wantOrder != nil)
			}
			if tc.wantOrder != nil {
				var got []string
				for _, r := range order {
					got = append(got, r.String())
				}
				if !reflect.DeepEqual(got, tc.wantOrder) {
					t.Errorf("apply order:\n got  %q\n want %q", got, tc.wantOrder)
				}
			}
		})
	}
}

func TestCycleDeclaredEdge(t *testing.T) {
	g := Build([]*policyv1.Policy{
		policy("a", deps(onPolicy("b", policyv1.Compliant)), config("a-cfg")),
		policy("b", nil, config("b-cfg", onPolicy("a", policyv1.NonCompliant))),
	}, nil)
	cycles := g.Cycles()
	if len(cycles) != 1 {
		t.Fatalf("got %d cycles, want 1", len(cycles))
	}
	got := cycles[0].Declared()
	if got.Policy.Name != "a" || got.Field.String() != "spec.dependencies[0]" || got.To != policyRef("default.b") {
		t.Errorf("Declared() = %+v, want the edge of Policy a spec.dependencies[0] to Policy default.b", got)
	}
}

func TestCyclesAreBounded(t *testing.T) {
	// Every template waits for every other: far more elementary cycles than MaxCycles.
	var templates []*policyv1.PolicyTemplate
	const n = 8
	for i := range n {
		var extra []policyv1.PolicyDependency
		for j := range n {
			if j != i {
				extra = append(extra, onConfig(fmt.Sprintf("t%d", j), policyv1.Compliant))
			}
		}
		templates = append(templates, config(fmt.Sprintf("t%d", i), extra...))
	}
	cycles := Build([]*policyv1.Policy{policy("p", nil, templates...)}, nil).Cycles()
	if len(cycles) != MaxCycles {
		t.Fatalf("got %d cycles, want MaxCycles (%d)", len(cycles), MaxCycles)
	}
	for _, c := range cycles {
		assertClosedChain(t, c)
	}
}

// assertClosedChain fails unless each edge of c starts where the previous ended
// and the last leads back to the first.
func assertClosedChain(t *testing.T, c Cycle) {
	t.Helper()
	for i, e := range c.Edges {
		next := c.Edges[(i+1)%len(c.Edges)]
		if e.To != next.From {
			t.Fatalf("cycle %s is broken at edge %d: %v then %v", c.Path(), i, e, next)
		}
	}
}
