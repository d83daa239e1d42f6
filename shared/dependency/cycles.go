package dependency

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxCycles bounds the number of cycles Cycles returns: the number of elementary
// cycles can grow exponentially with the size of a strongly connected group.
const MaxCycles = 100

// MaxPathNodes bounds the objects Cycle.Path names: a longer cycle is named by
// its first MaxPathNodes objects and the count of the others.
const MaxPathNodes = 20

// The listing of more than one cycle per strongly connected group stops once
// it has taken cyclePasses passes' worth of steps (see Graph.cycles) over the
// graph's nodes and edges, or has listed cycles as long in all as the graph
// has nodes, beyond allowances that any graph of a few dozen nodes stays
// within: there, every elementary cycle is listed, up to MaxCycles.
const (
	cyclePasses        = 4
	cycleAllowance     = 100_000 // steps
	cycleNodeAllowance = 10_000  // nodes of the cycles listed
)

// Cycle is a closed chain of waits: Edges[i].To is Edges[i+1].From and the last
// edge leads back to the first node. It starts at its earliest node (in the order
// given to Build).
type Cycle struct {
	Edges []Edge
}

// Path renders the cycle as "A -> B -> C -> A". A cycle of more than
// MaxPathNodes objects is cut after the first MaxPathNodes, e.g. "A -> B -> ...
// and 19,980 more -> A", so that the message stays short however long the
// cycle.
func (c Cycle) Path() string {
	if len(c.Edges) == 0 {
		return ""
	}
	shown := min(len(c.Edges), MaxPathNodes)
	parts := make([]string, 0, shown+2)
	for _, e := range c.Edges[:shown] {
		parts = append(parts, e.From.String())
	}
	if more := len(c.Edges) - shown; more > 0 {
		parts = append(parts, "... and "+thousands(more)+" more")
	}
	parts = append(parts, c.Edges[0].From.String())
	return strings.Join(parts, " -> ")
}

// thousands renders n >= 0 with a comma between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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

// Cycles returns elementary cycles of the graph, each starting at its earliest
// node, ordered by their node sequences: every one of them when there are at
// most MaxCycles, as long as listing them stays within the work bound below.
// Every strongly connected group of nodes (a knot that no apply order can
// untie) is named by at least one cycle, its first one, up to MaxCycles groups;
// the other cycles are the first in that order.
//
// The time is linear in the size of the graph, whatever its shape: Tarjan's
// algorithm finds the strongly connected groups, the first cycle of each group
// costs the group's size, and Johnson's algorithm lists the others, each
// starting node's group found again by Tarjan's algorithm on what remains of
// its group. Since elementary cycles can be exponentially many, and each may
// cost a pass over its group, that listing stops at cyclePasses passes' worth
// of the whole graph's nodes and edges, or once the cycles listed are as long
// in all as the graph has nodes (beyond fixed allowances, whatever the size),
// so that a dense group of long cycles costs no more than a few copies of the
// graph.
func (g *Graph) Cycles() []Cycle {
	found, _ := g.cycles(MaxCycles)
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

// cycles returns up to limit elementary cycles as node sequences starting at
// their earliest node (see Cycles; not sorted), and the steps the search took:
// nodes and edges visited and cycle nodes copied, the work that the tests
// bound by the graph's size.
func (g *Graph) cycles(limit int) (found [][]int, steps int) {
	if limit <= 0 {
		return nil, 0
	}
	n := len(g.refs)
	s := newSearch(g)
	all := make([]int, n)
	for u := range all {
		all[u] = u
	}
	groups := s.split(all)

	// The first cycle of each group: the first that Johnson's search finds
	// from the group's earliest node, in a pass over the group.
	first := make([][]int, 0, min(len(groups), limit))
	for _, group := range groups {
		if len(first) >= limit {
			break
		}
		first = s.circuits(group, first, len(first)+1)
	}

	// Every cycle, by Johnson's algorithm: from each node s, the cycles whose
	// earliest node is s, in the strongly connected group of s among the
	// nodes after s. pending[u] is a group whose earliest node is u: the
	// groups are taken in the order of their earliest nodes, which only
	// grows.
	s.budget = s.steps + cyclePasses*(n+s.edgeCount()) + cycleAllowance
	s.nodeBudget = s.nodes + n + cycleNodeAllowance
	pending := make([][]int, n)
	for _, group := range groups {
		pending[group[0]] = group
	}
	var more [][]int
	for u := range n {
		s.steps++
		if pending[u] == nil {
			continue
		}
		if len(more) >= limit || s.spent() {
			break
		}
		group := pending[u]
		pending[u] = nil
		more = s.circuits(group, more, limit)
		if len(more) >= limit || s.spent() {
			break
		}
		for _, rest := range s.split(group[1:]) {
			pending[rest[0]] = rest
		}
	}

	// The first cycles, then the others, up to limit in all.
	firstFrom := make(map[int][]int, len(first))
	for _, c := range first {
		firstFrom[c[0]] = c
	}
	found = first
	for _, c := range more {
		if len(found) >= limit {
			break
		}
		if f, ok := firstFrom[c[0]]; ok && slices.Equal(f, c) {
			continue
		}
		found = append(found, c)
	}
	return found, s.steps
}

// search holds the state of one search for cycles, indexed by node.
type search struct {
	g      *Graph
	steps  int // the work done, see Graph.cycles
	budget int // circuits stops once steps exceed it
	// nodes counts the nodes of the cycles found; circuits stops once they
	// exceed nodeBudget.
	nodes, nodeBudget int
	// stamp marks the nodes of the group being searched: member[u] == stamp.
	stamp  int
	member []int
	// Tarjan's algorithm.
	index, low, comp []int
	onStack          []bool
	// Johnson's algorithm: blocked nodes, and waiting[w], the blocked nodes
	// to unblock when w is (possibly repeated: each entry costs one edge
	// visit, and is dropped when w is unblocked).
	blocked []bool
	waiting [][]int
}

func newSearch(g *Graph) *search {
	n := len(g.refs)
	return &search{
		g: g, budget: math.MaxInt, nodeBudget: math.MaxInt,
		member: make([]int, n), index: make([]int, n), low: make([]int, n), comp: make([]int, n),
		onStack: make([]bool, n), blocked: make([]bool, n), waiting: make([][]int, n),
	}
}

func (s *search) edgeCount() int {
	e := 0
	for _, targets := range s.g.out {
		e += len(targets)
	}
	return e
}

// spent reports whether the search has used up its budget.
func (s *search) spent() bool { return s.steps > s.budget || s.nodes > s.nodeBudget }

// split returns the strongly connected groups of more than one node of the
// subgraph made of nodes (ascending), each ascending, in the order of their
// earliest nodes (Tarjan's algorithm, iterative, linear in the nodes and
// the edges leaving them).
func (s *search) split(nodes []int) [][]int {
	s.stamp++
	const unvisited = -1
	for _, u := range nodes {
		s.steps++
		s.member[u] = s.stamp
		s.index[u] = unvisited
	}
	type frame struct{ node, next int } // next: position in out[node] to visit
	var (
		stack, sizes []int
		calls        []frame
		next         int
	)
	for _, root := range nodes {
		if s.index[root] != unvisited {
			continue
		}
		calls = append(calls[:0], frame{node: root})
		s.index[root], s.low[root] = next, next
		next++
		stack = append(stack, root)
		s.onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			u := f.node
			if out := s.g.out[u]; f.next < len(out) {
				w := out[f.next]
				f.next++
				s.steps++
				switch {
				case s.member[w] != s.stamp:
				case s.index[w] == unvisited:
					s.index[w], s.low[w] = next, next
					next++
					stack = append(stack, w)
					s.onStack[w] = true
					calls = append(calls, frame{node: w})
				case s.onStack[w]:
					s.low[u] = min(s.low[u], s.index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				parent := calls[len(calls)-1].node
				s.low[parent] = min(s.low[parent], s.low[u])
			}
			if s.low[u] == s.index[u] {
				c := len(sizes)
				count := 0
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					s.onStack[w] = false
					s.comp[w] = c
					count++
					if w == u {
						break
					}
				}
				sizes = append(sizes, count)
			}
		}
	}
	// Group the nodes, ascending, by component; a component of one node is
	// on no cycle (the graph has no edge from a node to itself).
	byComp := make([][]int, len(sizes))
	var order []int // components, in the order of their earliest nodes
	for _, u := range nodes {
		s.steps++
		c := s.comp[u]
		if sizes[c] < 2 {
			continue
		}
		if byComp[c] == nil {
			byComp[c] = make([]int, 0, sizes[c])
			order = append(order, c)
		}
		byComp[c] = append(byComp[c], u)
	}
	groups := make([][]int, len(order))
	for i, c := range order {
		groups[i] = byComp[c]
	}
	return groups
}

// circuits appends to found the elementary cycles through the earliest node of
// group (a strongly connected group, ascending) that stay in group, in the
// order of their node sequences, until found holds limit cycles or the budget
// is spent (Johnson's CIRCUIT, iterative).
func (s *search) circuits(group []int, found [][]int, limit int) [][]int {
	s.stamp++
	for _, u := range group {
		s.steps++
		s.member[u] = s.stamp
		s.blocked[u] = false
		s.waiting[u] = s.waiting[u][:0]
	}
	start := group[0]
	type frame struct {
		node, next int // next: position in out[node] to visit
		closed     bool
	}
	calls := []frame{{node: start}}
	s.blocked[start] = true
	for len(calls) > 0 {
		if len(found) >= limit || s.spent() {
			return found
		}
		f := &calls[len(calls)-1]
		v := f.node
		if out := s.g.out[v]; f.next < len(out) {
			w := out[f.next]
			f.next++
			s.steps++
			switch {
			case s.member[w] != s.stamp:
			case w == start:
				cycle := make([]int, len(calls))
				for i, c := range calls {
					cycle[i] = c.node
				}
				s.steps += len(cycle)
				s.nodes += len(cycle)
				found = append(found, cycle)
				f.closed = true
			case !s.blocked[w]:
				s.blocked[w] = true
				calls = append(calls, frame{node: w})
			}
			continue
		}
		closed := f.closed
		if closed {
			s.unblock(v)
		} else {
			for _, w := range s.g.out[v] {
				s.steps++
				if s.member[w] == s.stamp {
					s.waiting[w] = append(s.waiting[w], v)
				}
			}
		}
		calls = calls[:len(calls)-1]
		if closed && len(calls) > 0 {
			calls[len(calls)-1].closed = true
		}
	}
	return found
}

// unblock unblocks u and, through the waiting lists, the blocked nodes that
// wait for it.
func (s *search) unblock(u int) {
	s.blocked[u] = false
	todo := []int{u}
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, w := range s.waiting[x] {
			s.steps++
			if s.blocked[w] {
				s.blocked[w] = false
				todo = append(todo, w)
			}
		}
		s.waiting[x] = s.waiting[x][:0]
	}
}

// stronglyConnected numbers the strongly connected components of the graph:
// scc[u] is u's component and size[c] the number of nodes of component c.
func (g *Graph) stronglyConnected() (scc, size []int) {
	s := newSearch(g)
	all := make([]int, len(g.refs))
	for u := range all {
		all[u] = u
	}
	s.split(all)
	size = make([]int, len(g.refs))
	for _, c := range s.comp {
		size[c]++
	}
	return s.comp, size
}
