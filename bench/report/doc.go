// Command benchreport reads benchmark result lines — the format `go test -bench`
// prints, one line per run (docs/performance.md) — from the files named on the
// command line (standard input when there are none) and prints ONE table: per
// benchmark and figure, the median over runs, the number of runs, the median of
// the floor measured in the same runs, the median of the ratio to that floor, and
// the target the repository states for that figure, marked pass or MISS.
// `make bench` runs every benchmark into bin/bench/results.txt and then this
// command; `-markdown` prints the table for docs/performance.md. The targets
// (targets.go) are the ones bench/README.md lists.
//
// Names are shown without "Benchmark" and without go test's -N GOMAXPROCS
// suffix, so that the lines of one benchmark from go test and from
// fleetpolicy-bench group together. Per benchmark, units are read as:
//   - "x-<anything>": the ratio to the floor (x-floor, x-identity);
//   - "floor-<unit>": the floor of the figure in <unit>, as are the older
//     spellings "identity-s/run" (of "s/run") and "s/floor" (of "s/sync");
//   - any other unit: a figure, one row each. go test's ns/op is left out next
//     to other figures when the benchmark reports a floor (then ns/op times the
//     benchmark's whole loop, floor included), its own time (s, ms, s/run,
//     s/wave...: ns/op is the same time again), or when ns/op is 0 in every run
//     (as fleetpolicy-bench prints it for figures that are not times). B/op and
//     allocs/op are left out unless -allocs is given.
//
// The figure that has a floor comes first, with its floor and the ratio; the
// other figures follow in the order they were read. Without a floor the ratio
// goes with the first figure. A floor without its figure, and any ratio after the first, get rows
// of their own: no value read is dropped silently. Medians of figure, floor and
// ratio are each taken over their own values, so the ratio shown is the median
// of the per-run ratios. The fast shared/ micro-benchmarks are printed like
// every other benchmark: without -allocs, one ns/op row each.
//
// Input lines that start with "Benchmark" but do not parse are reported on
// standard error with their file and line, after the table, and make the
// command exit 1. A missed target does not: targets are facts to report, and
// some are known to be missed.
//
// benchreport lives in bench/report, beside the index of every benchmark
// (bench/README.md), and is built into bin/benchreport. It is a module of its
// own (built with GOWORK=off, like the pinned tools under hack/tools) so that
// golang.org/x/perf's requirements never enter the product modules'
// dependency graph, and so that `make build` (every controllers/cmd program)
// and the container images do not pick it up.
package main
