// Package spokebench benchmarks the spoke's template sync against a real hub
// and a real managed cluster (two local API servers): 500 policies in chains of
// dependencies, from the replicas' creation on the hub until every replica on
// the hub reports Compliant, versus the floor of writing the same objects and
// statuses directly. Run it with
//
//	go test -run '^$' -bench BenchmarkTemplateSync500 -benchtime 3x -timeout 30m ./controllers/internal/spoke/spokebench/
//
// (`make bench` does). The benchmark is in bench_test.go; this package has no
// other code.
package spokebench
