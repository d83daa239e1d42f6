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
// Johnson's algorithm within each strongly connected component (Tarjan's, in
// linear time), so a graph without cycles costs linear time, and otherwise the
// work is bounded by the size of the components on cycles times the number of
// cycles returned.
func (g *Graph) Cycles() []Cycle {
	var found [][]int
	scc, size := g.stronglyConnected()
	for s := range g.refs {
		if len(found) >= MaxCycles {
			break
		}
		if size[scc[s]] < 2 {
			continue // on no cycle: most nodes, found in linear time
		}
		found = append(found, g.cyclesFrom(s, scc, MaxCycles-len(found))...)
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

// cyclesFrom returns up to limit elementary cycles whose earliest node is s;
// scc numbers the strongly connected component of each node.
func (g *Graph) cyclesFrom(s int, scc []int, limit int) [][]int {
	component := g.componentOf(s, scc)
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
// Only nodes of s's component in the whole graph (scc) can be among them.
func (g *Graph) componentOf(s int, scc []int) map[int]bool {
	reached := map[int]bool{s: true}
	todo := []int{s}
	for len(todo) > 0 {
		u := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, w := range g.out[u] {
			if w > s && scc[w] == scc[s] && !reached[w] {
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

// stronglyConnected numbers the strongly connected components of the graph
// (Tarjan's algorithm, iterative, in time linear in nodes and edges): scc[u]
// is u's component and size[c] the number of nodes of component c.
func (g *Graph) stronglyConnected() (scc, size []int) {
	n := len(g.refs)
	const unvisited = -1
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	scc = make([]int, n)
	for u := range index {
		index[u] = unvisited
	}
	var stack []int
	type frame struct{ node, next int } // next: position in out[node] to visit
	next := 0
	for root := range n {
		if index[root] != unvisited {
			continue
		}
		calls := []frame{{node: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			u := f.node
			if f.next < len(g.out[u]) {
				w := g.out[u][f.next]
				f.next++
				switch {
				case index[w] == unvisited:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{node: w})
				case onStack[w]:
					low[u] = min(low[u], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				parent := calls[len(calls)-1].node
				low[parent] = min(low[parent], low[u])
			}
			if low[u] == index[u] {
				c := len(size)
				count := 0
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					scc[w] = c
					count++
					if w == u {
						break
					}
				}
				size = append(size, count)
			}
		}
	}
	return scc, size
}
