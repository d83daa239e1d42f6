package dependency

import (
	"fmt"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// FuzzGraph builds graphs from arbitrary bytes and checks the invariants that
// tie cycles, apply order and edges together.
func FuzzGraph(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0})
	f.Add([]byte{3, 7, 2, 9, 4, 4, 1, 0, 8, 2, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		policies, sets := graphFromBytes(data)
		g := Build(policies, sets)
		cycles := g.Cycles()
		for _, c := range cycles {
			assertClosedChain(t, c)
			if !c.Declared().declared() {
				t.Fatalf("cycle %s has no declared edge", c.Path())
			}
		}
		order, ordered := g.ApplyOrder()
		if ordered != (len(cycles) == 0) {
			t.Fatalf("ApplyOrder ok = %v with %d cycles", ordered, len(cycles))
		}
		position := map[Ref]int{}
		for i, r := range order {
			position[r] = i
		}
		for key, e := range g.edges {
			from, fromOK := position[e.From]
			to, toOK := position[e.To]
			if fromOK && (!toOK || to > from) {
				t.Fatalf("%v is ordered before %v, which it waits for (edge %v)", e.From, e.To, key)
			}
		}
	})
}

// graphFromBytes reads policies, templates and dependencies from data: small
// numbers name a few policies, templates and sets so that cycles are likely.
func graphFromBytes(data []byte) ([]*policyv1.Policy, []*policyv1beta1.PolicySet) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	states := []policyv1.ComplianceState{policyv1.Compliant, policyv1.NonCompliant, policyv1.Pending, "bogus"}
	dep := func() policyv1.PolicyDependency {
		b := next()
		state := states[b%len(states)]
		switch b / 4 % 3 {
		case 0:
			return onPolicy(fmt.Sprintf("p%d", next()%4), state)
		case 1:
			return onConfig(fmt.Sprintf("t%d", next()%6), state)
		default:
			return onSet(fmt.Sprintf("s%d", next()%2), state)
		}
	}
	var policies []*policyv1.Policy
	for p := range next()%5 + 1 {
		var top []policyv1.PolicyDependency
		for range next() % 3 {
			top = append(top, dep())
		}
		var templates []*policyv1.PolicyTemplate
		for range next() % 3 {
			b := next()
			var extra []policyv1.PolicyDependency
			for range b % 3 {
				extra = append(extra, dep())
			}
			tmpl := config(fmt.Sprintf("t%d", next()%6), extra...)
			tmpl.IgnorePending = b&8 != 0
			templates = append(templates, tmpl)
		}
		policies = append(policies, policy(fmt.Sprintf("p%d", p), top, templates...))
	}
	var sets []*policyv1beta1.PolicySet
	for s := range next() % 3 {
		sets = append(sets, policySet(fmt.Sprintf("s%d", s), fmt.Sprintf("p%d", next()%4), fmt.Sprintf("p%d", next()%4)))
	}
	return policies, sets
}
