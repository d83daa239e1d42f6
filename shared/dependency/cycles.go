package dependency

import (
	"slices"
	"strings"
)

// MaxCycles bounds the number of cycles Cycles returns: the number of elementary
// cycles can grow exponentially with the size of a strongly connected group.
const MaxCycles = 100

// Cycle is a closed chain of waits: Edges[i].To is Edges[i+1].From and the last
// edge leads back to the first node. It starts at its earliest node (in the order
// given to Build).
type Cycle struct {
	Edges []Edge
}

// Path renders the cycle as "A -> B -> C -> A".
func (c Cycle) Path() string {
	if len(c.Edges) == 0 {
		return ""
	}
	parts := make([]string, 0, len(c.Edges)+1)
	for _, e := range c.Edges {
		parts = append(parts, e.From.String())
	}
	parts = append(parts, c.Edges[0].From.String())
	return strings.Join(parts, " -> ")
}

// Declared returns the first edge of the cycle that a dependency field declared;
// every cycle has one, since the edges from Policies to their templates and from
// PolicySets to their members cannot close a cycle by themselves.
func (c Cycle) Declared() Edge {
	for _, e := range c.Edges {
		if e.declared() {
			return e
		}
	}
	return Edge{}
}

// Cycles returns every elementary cycle of the graph (at most MaxCycles), each
// starting at its earliest node, ordered by their node sequences. It follows
// Johnson's algorithm, so the work is bounded by the size of the graph times
// the number of cycles returned.
func (g *Graph) Cycles() []Cycle {
	var found [][]int
	for s := range g.refs {
		if len(found) >= MaxCycles {
			break
		}
		found = append(found, g.cyclesFrom(s, MaxCycles-len(found))...)
	}
	slices.SortFunc(found, slices.Compare)
	cycles := make([]Cycle, len(found))
	for i, nodes := range found {
		edges := make([]Edge, len(nodes))
		for j, u := range nodes {
			edges[j] = g.edges[[2]int{u, nodes[(j+1)%len(nodes)]}]
		}
		cycles[i] = Cycle{Edges: edges}
	}
	return cycles
}

// cyclesFrom returns up to limit elementary cycles whose earliest node is s.
func (g *Graph) cyclesFrom(s, limit int) [][]int {
	component := g.componentOf(s)
	if len(component) < 2 {
		return nil
	}
	var (
		found   [][]int
		stack   []int
		blocked = map[int]bool{}
		waiting = map[int][]int{} // waiting[w]: blocked nodes to unblock when w is
	)
	var unblock func(u int)
	unblock = func(u int) {
		blocked[u] = false
		for _, w := range waiting[u] {
			if blocked[w] {
				unblock(w)
			}
		}
		delete(waiting, u)
	}
	var circuit func(v int) bool
	circuit = func(v int) bool {
		closed := false
		stack = append(stack, v)
		blocked[v] = true
		for _, w := range g.out[v] {
			if !component[w] || len(found) >= limit {
				continue
			}
			if w == s {
				found = append(found, slices.Clone(stack))
				closed = true
			} else if !blocked[w] && circuit(w) {
				closed = true
			}
		}
		if closed {
			unblock(v)
		} else {
			for _, w := range g.out[v] {
				if component[w] && !slices.Contains(waiting[w], v) {
					waiting[w] = append(waiting[w], v)
				}
			}
		}
		stack = stack[:len(stack)-1]
		return closed
	}
	circuit(s)
	return found
}

// componentOf returns the strongly connected component of s in the subgraph of
// the nodes numbered s or more: the nodes s reaches there that also reach s.
func (g *Graph) componentOf(s int) map[int]bool {
	reached := map[int]bool{s: true}
	todo := []int{s}
	for len(todo) > 0 {
		u := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, w := range g.out[u] {
			if w > s && !reached[w] {
				reached[w] = true
				todo = append(todo, w)
			}
		}
	}
	// Walk backwards from s through the reached nodes.
	in := map[int][]int{}
	for u := range reached {
		for _, w := range g.out[u] {
			if reached[w] {
				in[w] = append(in[w], u)
			}
		}
	}
	component := map[int]bool{s: true}
	todo = []int{s}
	for len(todo) > 0 {
		u := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, w := range in[u] {
			if !component[w] {
				component[w] = true
				todo = append(todo, w)
			}
		}
	}
	return component
}
