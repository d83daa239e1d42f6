package dependency

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// adjacencyGraph is a graph of n ConfigurationPolicies n0, n1, ... in which
// node u waits for each node of out[u]; every edge is declared, by
// spec.dependencies[0] of Policy default/p.
func adjacencyGraph(out [][]int) *Graph {
	g := &Graph{index: map[Ref]int{}, edges: map[[2]int]Edge{}}
	for u := range out {
		g.node(configRef(fmt.Sprintf("n%d", u)))
	}
	for u, targets := range out {
		for _, w := range targets {
			g.edge(Edge{From: g.refs[u], To: g.refs[w], Policy: types.NamespacedName{Namespace: "default", Name: "p"}, Field: dependencyField(0)})
		}
	}
	return g
}

// The shapes of graph of n nodes that the cycle search must handle in linear
// time.
func chainShape(n int) [][]int {
	out := make([][]int, n)
	for u := range n - 1 {
		out[u] = []int{u + 1}
	}
	return out
}

func ringShape(n int) [][]int {
	out := make([][]int, n)
	for u := range n {
		out[u] = []int{(u + 1) % n}
	}
	return out
}

// denseShape: each node waits for the next 8, around a ring: one strongly
// connected group with exponentially many elementary cycles, most of them
// long.
func denseShape(n int) [][]int {
	out := make([][]int, n)
	for u := range n {
		for d := 1; d <= 8 && d < n; d++ {
			out[u] = append(out[u], (u+d)%n)
		}
	}
	return out
}

// completeShape: every node waits for every other.
func completeShape(n int) [][]int {
	out := make([][]int, n)
	for u := range n {
		for w := range n {
			if w != u {
				out[u] = append(out[u], w)
			}
		}
	}
	return out
}

// ringOfRingsShape: rings of 10 nodes whose first nodes form a ring too: one
// group, n/10+1 elementary cycles.
func ringOfRingsShape(n int) [][]int {
	const m = 10
	rings := n / m
	out := make([][]int, rings*m)
	for r := range rings {
		for i := range m {
			out[r*m+i] = []int{r*m + (i+1)%m}
		}
		out[r*m] = append(out[r*m], (r+1)%rings*m)
	}
	return out
}

// ringWithBypassesShape: a ring with a shortcut over every tenth node: each
// choice of shortcuts is another long elementary cycle.
func ringWithBypassesShape(n int) [][]int {
	out := ringShape(n)
	for u := 0; u+2 < n; u += 10 {
		out[u] = append(out[u], u+2)
	}
	return out
}

func size(g *Graph) int {
	e := 0
	for _, targets := range g.out {
		e += len(targets)
	}
	return len(g.refs) + e
}

// TestCyclesLinear counts the steps of the cycle search (nodes and edges
// visited, cycle nodes copied) on shapes that once made it quadratic (a ring
// of 10,000 policies took a minute: the group of each start node was searched
// again in full) or could make it so (dense groups hold exponentially many
// cycles, most of them long): the steps stay within a few passes over the
// graph, and the cycles found within a few times its nodes.
func TestCyclesLinear(t *testing.T) {
	const passes = 12 // the bound: passes*(nodes+edges) + 2*cycleAllowance
	cases := []struct {
		name  string
		shape func(int) [][]int
		sizes []int
		// cycles: the number of cycles Cycles returns at each size.
		cycles func(n int) int
	}{
		{"chain", chainShape, []int{2000, 20000}, func(int) int { return 0 }},
		{"ring", ringShape, []int{2000, 20000}, func(int) int { return 1 }},
		{"ring of rings", ringOfRingsShape, []int{200, 20000}, func(n int) int { return min(n/10+1, MaxCycles) }},
		{"complete", completeShape, []int{30, 300}, func(int) int { return MaxCycles }},
		{"dense", denseShape, []int{2000, 20000}, nil},
		{"ring with bypasses", ringWithBypassesShape, []int{2000, 20000}, nil},
	}
	for _, c := range cases {
		for _, n := range c.sizes {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				g := adjacencyGraph(c.shape(n))
				found, steps := g.cycles(MaxCycles)
				if limit := passes*size(g) + 2*cycleAllowance; steps > limit {
					t.Errorf("%d steps on %d nodes and edges, want at most %d: the search is not linear", steps, size(g), limit)
				}
				listed := 0
				for _, cycle := range found {
					assertElementary(t, g, cycle)
					listed += len(cycle)
				}
				// The first cycle of each group (n nodes in all at most),
				// then up to n + cycleNodeAllowance more, and the one that
				// crosses that line.
				if limit := 3*len(g.refs) + cycleNodeAllowance; listed > limit {
					t.Errorf("the cycles found hold %d nodes in all, want at most %d", listed, limit)
				}
				if len(found) == 0 && c.name != "chain" {
					t.Errorf("no cycle found")
				}
				if c.cycles != nil && len(found) != c.cycles(n) {
					t.Errorf("%d cycles, want %d", len(found), c.cycles(n))
				}
				t.Logf("%d cycles, %d steps, %.1f per node and edge", len(found), steps, float64(steps)/float64(size(g)))
			})
		}
	}
}

// assertElementary fails unless cycle is a cycle of g's edges that passes
// through no node twice and starts at its earliest node.
func assertElementary(t *testing.T, g *Graph, cycle []int) {
	t.Helper()
	seen := map[int]bool{}
	for i, u := range cycle {
		if seen[u] || u < cycle[0] {
			t.Fatalf("cycle %v repeats node %d or does not start at its earliest node", cycle, u)
		}
		seen[u] = true
		if _, ok := g.edges[[2]int{u, cycle[(i+1)%len(cycle)]}]; !ok {
			t.Fatalf("cycle %v: no edge from %d", cycle, u)
		}
	}
}

// TestCyclesNameEveryGroup checks that a dense group with more than
// MaxCycles cycles does not hide a later, separate group.
func TestCyclesNameEveryGroup(t *testing.T) {
	out := completeShape(8) // nodes 0-7: thousands of cycles
	out = append(out, []int{9}, []int{8}, []int{11}, []int{10})
	cycles := adjacencyGraph(out).Cycles()
	if len(cycles) != MaxCycles {
		t.Fatalf("got %d cycles, want MaxCycles (%d)", len(cycles), MaxCycles)
	}
	var paths []string
	for _, c := range cycles {
		assertClosedChain(t, c)
		paths = append(paths, c.Path())
	}
	for _, want := range []string{
		"ConfigurationPolicy n0 -> ConfigurationPolicy n1 -> ConfigurationPolicy n0",
		"ConfigurationPolicy n8 -> ConfigurationPolicy n9 -> ConfigurationPolicy n8",
		"ConfigurationPolicy n10 -> ConfigurationPolicy n11 -> ConfigurationPolicy n10",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("no cycle %q among %q", want, paths)
		}
	}
}

func TestCyclePath(t *testing.T) {
	ring := func(n int) Cycle {
		return adjacencyGraph(ringShape(n)).Cycles()[0]
	}
	names := func(from, to int) string {
		var parts []string
		for i := from; i < to; i++ {
			parts = append(parts, fmt.Sprintf("ConfigurationPolicy n%d", i))
		}
		return strings.Join(parts, " -> ")
	}
	cases := []struct {
		name  string
		cycle Cycle
		want  string
	}{
		{"empty", Cycle{}, ""},
		{"two", ring(2), "ConfigurationPolicy n0 -> ConfigurationPolicy n1 -> ConfigurationPolicy n0"},
		{"MaxPathNodes, in full", ring(MaxPathNodes), names(0, MaxPathNodes) + " -> ConfigurationPolicy n0"},
		{"one more than MaxPathNodes", ring(MaxPathNodes + 1), names(0, MaxPathNodes) + " -> ... and 1 more -> ConfigurationPolicy n0"},
		{"20,000", ring(20000), names(0, MaxPathNodes) + " -> ... and 19,980 more -> ConfigurationPolicy n0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cycle.Path(); got != c.want {
				t.Errorf("Path() =\n %q\nwant\n %q", got, c.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 19980: "19,980", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzCycles checks the cycle search on arbitrary small graphs against every
// elementary cycle listed by brute force: all of them when they fit in the
// limit; otherwise the first cycle of each strongly connected group, then the
// first others in order. And the steps stay linear in the graph's size.
func FuzzCycles(f *testing.F) {
	f.Add([]byte{3, 5, 0, 1, 1, 2, 2, 0})
	f.Add([]byte{7, 2, 0, 1, 1, 0, 2, 3, 3, 2, 4, 5, 5, 6, 6, 4, 0, 4, 4, 0})
	f.Add([]byte{6, 0, 0, 1, 0, 2, 1, 0, 1, 2, 2, 0, 2, 1, 3, 4, 4, 3, 5, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := int(data[0])%7 + 1
		limit := int(data[1])%(MaxCycles+20) + 1
		out := make([][]int, n)
		for i := 2; i+1 < len(data); i += 2 {
			out[int(data[i])%n] = append(out[int(data[i])%n], int(data[i+1])%n)
		}
		g := adjacencyGraph(out)
		got, steps := g.cycles(limit)
		slices.SortFunc(got, slices.Compare)
		if bound := 12*size(g) + 2*cycleAllowance; steps > bound {
			t.Fatalf("%d steps on %d nodes and edges, want at most %d", steps, size(g), bound)
		}
		all := bruteForceCycles(g.out)
		want := all
		if len(all) > limit {
			// The first cycle of each group, in the order of their earliest
			// nodes, then the others in order.
			scc, _ := g.stronglyConnected()
			var first [][]int
			isFirst := map[string]bool{}
			seen := map[int]bool{}
			for _, c := range all {
				if !seen[scc[c[0]]] {
					seen[scc[c[0]]] = true
					first = append(first, c)
					isFirst[fmt.Sprint(c)] = true
				}
			}
			want = first[:min(len(first), limit)]
			for _, c := range all {
				if len(want) < limit && !isFirst[fmt.Sprint(c)] {
					want = append(want, c)
				}
			}
			slices.SortFunc(want, slices.Compare)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("graph %v, limit %d:\n got  %v\n want %v", out, limit, got, want)
		}
		// Cycles renders cycles(MaxCycles), sorted.
		nodes, _ := g.cycles(MaxCycles)
		slices.SortFunc(nodes, slices.Compare)
		cycles := g.Cycles()
		if len(cycles) != len(nodes) {
			t.Fatalf("Cycles() returned %d cycles, cycles(MaxCycles) %d", len(cycles), len(nodes))
		}
		for i, c := range cycles {
			assertClosedChain(t, c)
			for j, e := range c.Edges {
				if e.From != g.refs[nodes[i][j]] || !e.declared() {
					t.Fatalf("cycle %d is %s, want the nodes %v", i, c.Path(), nodes[i])
				}
			}
		}
	})
}

// bruteForceCycles lists every elementary cycle of the graph, each starting
// at its earliest node, in the order of their node sequences.
func bruteForceCycles(out [][]int) [][]int {
	var all [][]int
	for s := range out {
		path := []int{s}
		on := map[int]bool{s: true}
		var walk func(v int)
		walk = func(v int) {
			for _, w := range out[v] {
				switch {
				case w == s:
					all = append(all, slices.Clone(path))
				case w > s && !on[w]:
					on[w] = true
					path = append(path, w)
					walk(w)
					path = path[:len(path)-1]
					on[w] = false
				}
			}
		}
		walk(s)
	}
	slices.SortFunc(all, slices.Compare)
	return all
}

// BenchmarkCycles is the cost of Cycles on chains, rings and dense groups (each
// node waiting for the next 8, around a ring) of 1,000 and 10,000 nodes.
// ns/(V+E), the time per node and edge, stays flat from 1,000 to 10,000 when
// the search is linear (a quadratic search multiplies it by 10); steps/(V+E)
// is the work TestCyclesLinear bounds.
func BenchmarkCycles(b *testing.B) {
	for _, shape := range []struct {
		name  string
		shape func(int) [][]int
	}{{"ring", ringShape}, {"chain", chainShape}, {"dense", denseShape}, {"ring-of-rings", ringOfRingsShape}} {
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				g := adjacencyGraph(shape.shape(n))
				for b.Loop() {
					g.Cycles()
				}
				_, steps := g.cycles(MaxCycles)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size(g)), "ns/(V+E)")
				b.ReportMetric(float64(steps)/float64(size(g)), "steps/(V+E)")
			})
		}
	}
}
