package dependency

import (
	"container/heap"
)

// ApplyOrder returns the nodes in an order in which each comes after everything
// it waits for, earliest given first among the ready ones. When the graph has
// cycles it returns the nodes that can be ordered and false; the nodes on or
// behind a cycle are left out.
func (g *Graph) ApplyOrder() ([]Ref, bool) {
	waitingFor := make([]int, len(g.refs)) // unordered nodes each node waits for
	waitedBy := make([][]int, len(g.refs))
	for u, targets := range g.out {
		waitingFor[u] = len(targets)
		for _, w := range targets {
			waitedBy[w] = append(waitedBy[w], u)
		}
	}
	ready := &minHeap{}
	for u, n := range waitingFor {
		if n == 0 {
			heap.Push(ready, u)
		}
	}
	order := make([]Ref, 0, len(g.refs))
	for ready.Len() > 0 {
		u := heap.Pop(ready).(int)
		order = append(order, g.refs[u])
		for _, v := range waitedBy[u] {
			waitingFor[v]--
			if waitingFor[v] == 0 {
				heap.Push(ready, v)
			}
		}
	}
	return order, len(order) == len(g.refs)
}

// minHeap is a heap of node numbers, smallest first.
type minHeap []int

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
