// Package spokebench benchmarks the spoke's template sync against a real hub
// and a real managed cluster (two local API servers): 500 policies in chains of
// dependencies, from the replicas' creation on the hub until every replica on
// the hub reports Compliant, versus the floor of writing the same objects,
// statuses and compliance events directly under the same client-side limits
// as the spoke (none: limits=none; the spoke's defaults: limits=default), and
// the spoke's peak memory while it does so. Run it with
//
//	make build
//	go test -run '^$' -bench BenchmarkSpokeTemplateSync -benchtime 1x -count 3 -timeout 30m ./controllers/internal/spokebench/
//
// (`make bench` does): one result line per run, medians left to the report tool
// (bench/report; bench/README.md indexes every benchmark).
//
// The spoke runs as the binary bin/fleetpolicy-spoke (a child process, its
// default options) rather than in the benchmark's process, so that its memory
// is measured the way fleetpolicy-bench measures the hub: the peak RSS of its
// own process (rusage maxrss), which is what a memory limit on the spoke's
// container meets. In process, the benchmark's own clients, fixtures and the
// floor's objects would share the heap, and a heap figure would leave out the
// runtime's overhead and memory the garbage collector has not returned.
// `make build` must have built the binary from the code under test.
//
// BenchmarkSpokeAgainstOCM (peer_test.go) runs fleetpolicy-spoke and OCM's
// policy agents (framework add-on and config-policy-controller v0.19,
// `make ocm-policy-binaries`) one after the other on the same hub API server
// and replicated Policies, each on a managed API server of its own, and
// reports fleetpolicy's figures with OCM's as the floor: time to every replica
// Compliant on the hub, CPU, idle CPU in the minute after, peak RSS and the
// requests each API server took (from its audit log). Run it with
//
//	make build ocm-policy-binaries
//	go test -run '^$' -bench 'BenchmarkSpokeAgainstOCM/policies=200/' -benchtime 1x -count 3 -timeout 90m ./controllers/internal/spokebench/
//
// and -args -peer-profile FILE to write each run's requests per user agent,
// verb, resource and code; -spoke-args passes flags to fleetpolicy-spoke
// (--cpu-profile=FILE, --hub-kube-api-qps=N).
//
// The benchmarks are in bench_test.go and peer_test.go; this package has no
// other code.
package spokebench
