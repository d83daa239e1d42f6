// Command fleetpolicy-bench measures the hub controller on a real local API
// server (kube-apiserver + etcd, as the tests use), each figure against a floor
// measured in the same run on the same server. The controller runs as a separate
// process (bin/fleetpolicy-hub, built by `make build`) so that its CPU seconds and
// peak RSS (rusage) are its own. `make bench` runs it with its defaults.
//
// Output: one Go benchmark result line per run and figure on stdout, in the
// format golang.org/x/perf/benchfmt reads (for example
// "BenchmarkHubPropagation/policies=1/clusters=1000/create 1 1630000000 ns/op
// 1.63 s 2.11 floor-s 0.77 x-floor"); medians are left to the report tool.
// Progress and a short summary of medians go to stderr; the hub controller's own
// output is appended to --hub-log.
//
// Suites (--suites, run in the order given; a failed suite does not stop the
// others, the command exits non-zero at the end):
//
//   - propagation: for each P×N of --propagation (default 1x1000, 1x3000,
//     100x1000), P root policies in one PlacementBinding to one Placement of N
//     clusters (PlacementDecisions of --per-decision). The hub is started and
//     the benchmark waits for its /readyz, as a user would; then it binds and
//     creates the roots. Every time runs from the API server's answer to the
//     user's first write of the phase. Figures: startup (the hub process's start
//     until /readyz answered 200; no floor), first-replica (the first root's
//     create until a watch has seen one replica), create (until it has seen all
//     P×N), update (from the first root update until all P×N replicas carry it),
//     the hub's CPU seconds per 1,000 replicas over its whole life, its peak
//     RSS. The floor
//     is this command as a child process (runFloorWriter), doing the least a
//     process that keeps the replicas in line must: it watches them through a
//     controller-runtime cache, creates the same replicas (built by
//     shared/replication) with --floor-writers writers, raw JSON and no
//     client-side rate limit, then updates each with one PUT from its cache. Its
//     times are taken like the hub's, and its CPU and peak RSS are the floors of
//     the hub's. A second floor, for scenarios of up to 10,000 replicas, is
//     the pure-write floor (runPureWriter): --floor-writers writers that only
//     write the same replicas, each create a POST and each update a PUT with
//     the resourceVersion of its create's answer, watching nothing; the hub's
//     create and update against it are the rows create/pure-write and
//     update/pure-write. Peak RSS is VmHWM read before a process ends
//     (localplane.PeakRSS), not rusage, which counts this command's own peak.
//     Runs: --runs (3) up to 10,000 replicas, --large-runs (1) above. 1x1000 and 1x3000 take about 20 s and 60 s per
//     run; 100x1000 writes 100,000 replicas four times and deletes them twice:
//     about 20 minutes on an idle 2-core machine (49 on a loaded one).
//   - memory: for each P×N of --memory (default 10x3000), on a fresh plane, the
//     hub creates the P×N replicas and takes one update of every root;
//     figures are its peak RSS and CPU, and (x-cache) its peak RSS against
//     the memory floor: a child process (runCacheFloor) that, once the hub has
//     stopped, only caches the same policies through a controller-runtime
//     cache. --large-runs runs, about 4 minutes each at 10x3000; at 100x3000
//     (300,000 replicas) about 41 minutes on a 2-core machine (creates 11,
//     the update of every root 22, deleting them 6).
//   - rollout: a ProgressivePerGroup rollout of one enforce root over
//     --rollout-clusters clusters in --rollout-waves decision groups, with
//     instantSpokes (this command playing every spoke's status sync: it watches
//     the replicas and writes each new generation's status at once, Compliant
//     when enforced, NonCompliant when informed). Per wave after the first, the
//     controller's time runs from the last report of the previous wave to the
//     moment a watch has seen the whole wave switched to enforce; the figure is the
//     median over the waves (each wave's time is printed to stderr). The floor is
//     the median time for the floor writers to switch one wave of the same
//     replicas to enforce directly. Also the total rollout time (root created
//     until every cluster reported Compliant) and the hub's CPU. The hub folds
//     replica status changes into one reconcile after --status-batch-delay: the
//     suite runs once per entry of --rollout-batch-delays (default 1s, the hub's
//     default, and 100ms, what a user who wants a fast rollout would set).
//     --runs runs, about a minute each. Each run at the first delay also rolls
//     --rollout-parallel-roots roots (default 10) out at once over the same
//     clusters; the figures are their total time against the single root's of
//     the same run (x-one-root): roots whose rollouts progressed one after the
//     other would take 10 times as long; and the first root's median wave
//     against the floor writers switching that wave of every root's replicas
//     directly.
//   - churn (compliance churn, the scenario OCM's own scale tests use): one
//     root on --churn-clusters clusters (default 3,000). Once every replica has
//     reported Compliant, every second for --churn-seconds seconds the next
//     --churn-fraction of the clusters (default 10%) flips compliance, written
//     by this command as spokes write it (a status merge patch per replica).
//     Figures: the lag from the API server's answer to each status write until
//     a watch of the root sees the cluster's new state in the root's status
//     (p50 and p99), the CPU per 1,000 changes of the process keeping the
//     root status (read from /proc before the first change and after the root
//     showed the last), and over the same span its root status writes that the
//     API server accepted and refused as conflicts (status-writes, from the API
//     server's apiserver_request_total; no target). The floor (runChurnFloor, a child process) only
//     watches the replicas through a controller-runtime cache and, one batch
//     delay (the hub's default, 1s) after a change, writes the root's
//     status.status from its cache, with the per-cluster fields the hub
//     writes. --runs runs, about two minutes each.
//   - templates: one root policy with two hub templates per replica
//     ({{hub .ManagedClusterName hub}} and a fromConfigMap) on
//     --templates-clusters clusters (default 1000) against the same root
//     untemplated, each created and updated through a fresh hub process in the
//     same run (the floor is the untemplated root's times and CPU). --runs
//     runs, about 40 s each.
//   - admission: placement admission latency over --admission-clusters
//     ManagedClusters, median and p90 of --admission-requests Policy creates
//     through the hub's webhook (Rego and CEL placement policies) against a
//     webhook that allows everything. --runs runs, about 20 s each.
//
// With the defaults the command takes well over 15 minutes because of the
// 100x1000 propagation; everything else takes about 25 minutes, half of it the
// 10 parallel roots of the rollout suite and the churn suite
// (--propagation=1x1000,1x3000 --rollout-parallel-roots=0 for a quicker pass).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

const benchNamespace = "bench"

// largeReplicas is the size above which a scenario runs --large-runs times.
const largeReplicas = 10_000

func main() {
	suites := flag.String("suites", "propagation,memory,rollout,churn,admission,templates", "comma-separated suites to run, in order: propagation, memory, rollout, churn, admission, templates")
	propagation := flag.String("propagation", "1x1000,1x3000,100x1000", "propagation scenarios, comma-separated POLICIESxCLUSTERS")
	memory := flag.String("memory", "10x3000", "memory scenarios, comma-separated POLICIESxCLUSTERS")
	perDecision := flag.Int("per-decision", 100, "clusters per PlacementDecision")
	runs := flag.Int("runs", 3, "runs of each scenario of up to 10,000 replicas, of the rollout and of admission")
	largeRuns := flag.Int("large-runs", 1, "runs of each scenario of more than 10,000 replicas")
	floorWriters := flag.Int("floor-writers", 10, "concurrent writers of the floor")
	hubBin := flag.String("hub", "bin/fleetpolicy-hub", "hub controller binary, relative to the repository root")
	hubArgs := flag.String("hub-args", "", "extra arguments for the hub controller, space-separated (e.g. --cpu-profile=/tmp/hub.pprof)")
	hubLog := flag.String("hub-log", filepath.Join(os.TempDir(), "fleetpolicy-bench-hub.log"), "file the hub controller's output is appended to")
	rolloutClusters := flag.Int("rollout-clusters", 1000, "clusters of the rollout suite")
	rolloutWaves := flag.Int("rollout-waves", 10, "decision groups (waves) of the rollout suite")
	rolloutDelays := flag.String("rollout-batch-delays", "1s,100ms", "the hub's --status-batch-delay for each rollout run, comma-separated")
	parallelRoots := flag.Int("rollout-parallel-roots", 10, "roots rolled out at once over the same clusters in each rollout run at the first of --rollout-batch-delays, against one root alone (0 or 1: none)")
	spokeWriters := flag.Int("spoke-writers", 16, "concurrent status writers of the instant spokes (rollout suite)")
	admissionClusters := flag.Int("admission-clusters", 1000, "ManagedClusters the placement policies decide over (admission suite)")
	admissionRequests := flag.Int("admission-requests", 100, "Policy creates measured per webhook and run (admission suite)")
	templatesClusters := flag.Int("templates-clusters", 1000, "clusters of the templates suite")
	var churn churnSettings
	flag.IntVar(&churn.clusters, "churn-clusters", 3000, "clusters of the compliance churn suite")
	flag.Float64Var(&churn.fraction, "churn-fraction", 0.1, "fraction of the clusters whose compliance changes every second (churn suite)")
	flag.IntVar(&churn.seconds, "churn-seconds", 20, "seconds of compliance churn (churn suite)")
	// The floor of a churn run, started by the benchmark as a child process.
	asChurnFloor := flag.Bool(churnFloorFlag, false, "internal: be the floor of one churn run")
	// The memory floor of a memory run, started by the benchmark as a child process.
	asCacheFloor := flag.Bool(cacheFloorFlag, false, "internal: be the memory floor of one memory run")
	// The floor of a propagation run, started by the benchmark as a child process.
	asFloorWriter := flag.Bool(floorWriterFlag, false, "internal: be the floor writer of one propagation run")
	var fw floorWriterArgs
	flag.StringVar(&fw.run, "run", "", "internal: the floor writer's run")
	flag.IntVar(&fw.policies, "policies", 1, "internal: the floor writer's root policies")
	flag.IntVar(&fw.clusters, "clusters-per-policy", 1, "internal: the floor writer's clusters")
	flag.BoolVar(&fw.pureWrite, pureWriteFlag, false, "internal: the floor writer only writes (the pure-write floor)")
	flag.Parse()
	ctrl.SetLogger(logr.Discard()) // the planes' envtest logs through controller-runtime

	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "fleetpolicy-bench:", err)
		os.Exit(1)
	}
	if *asChurnFloor {
		if err := runChurnFloor(flag.Lookup("kubeconfig").Value.String(), fw.run, hub.DefaultOptions().StatusBatchDelay); err != nil {
			fail(fmt.Errorf("churn floor: %w", err))
		}
		return
	}
	if *asCacheFloor {
		if err := runCacheFloor(flag.Lookup("kubeconfig").Value.String(), fw.run); err != nil {
			fail(fmt.Errorf("cache floor: %w", err))
		}
		return
	}
	if *asFloorWriter {
		fw.writers = *floorWriters
		fw.kubeconfig = flag.Lookup("kubeconfig").Value.String() // controller-runtime's flag
		if err := runFloorWriter(fw); err != nil {
			fail(fmt.Errorf("floor writer: %w", err))
		}
		return
	}
	propagationScenarios, err := parseScenarios(*propagation)
	if err != nil {
		fail(fmt.Errorf("--propagation: %w", err))
	}
	memoryScenarios, err := parseScenarios(*memory)
	if err != nil {
		fail(fmt.Errorf("--memory: %w", err))
	}
	delays, err := parseDurations(*rolloutDelays)
	if err != nil {
		fail(fmt.Errorf("--rollout-batch-delays: %w", err))
	}
	if *runs < 1 || *largeRuns < 1 || *floorWriters < 1 || *perDecision < 1 || *spokeWriters < 1 ||
		*rolloutWaves < 1 || *rolloutClusters < *rolloutWaves || churn.clusters < 1 || churn.seconds < 1 ||
		churn.fraction <= 0 || churn.fraction > 1 {
		fail(errors.New("--runs, --large-runs, --floor-writers, --per-decision, --spoke-writers, --rollout-waves, --churn-clusters and --churn-seconds must be positive, --rollout-clusters at least --rollout-waves, --churn-fraction in (0, 1]"))
	}
	churn.writers = *spokeWriters
	for _, suite := range strings.Split(*suites, ",") {
		if !slices.Contains([]string{"propagation", "memory", "rollout", "churn", "admission", "templates"}, strings.TrimSpace(suite)) {
			fail(fmt.Errorf("--suites: unknown suite %q", suite))
		}
	}
	root, err := localplane.RepoRoot()
	if err != nil {
		fail(err)
	}
	bin := *hubBin
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(root, bin)
	}

	logFile, err := os.OpenFile(*hubLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fail(err)
	}
	defer logFile.Close()
	progress("the hub controller's output goes to %s", *hubLog)

	ctx := context.Background()
	res := newResults(os.Stdout)
	b := &bench{writers: *floorWriters, hubBin: bin, hubArgs: strings.Fields(*hubArgs), hubLog: logFile, perDecision: *perDecision, res: res}
	defer b.stop()
	var failed []string
	for _, suite := range strings.Split(*suites, ",") {
		suite = strings.TrimSpace(suite)
		started := time.Now()
		switch suite {
		case "propagation":
			for _, sc := range propagationScenarios {
				if err = b.propagation(ctx, sc, sc.runs(*runs, *largeRuns)); err != nil {
					break
				}
			}
		case "memory":
			for _, sc := range memoryScenarios {
				if err = b.memory(ctx, sc, sc.runs(*runs, *largeRuns)); err != nil {
					break
				}
			}
		case "rollout":
			for i, delay := range delays {
				roots := *parallelRoots
				if i > 0 {
					roots = 0
				}
				if err = b.rollout(ctx, *rolloutClusters, *rolloutWaves, delay, *spokeWriters, roots, *runs); err != nil {
					break
				}
			}
		case "churn":
			err = b.churn(ctx, churn, *runs)
		case "admission":
			err = benchAdmission(ctx, res, root, *admissionClusters, *admissionRequests, *runs)
		case "templates":
			err = b.hubTemplates(ctx, *templatesClusters, *runs)
		}
		if err != nil {
			// The other suites still run; the command fails at the end.
			failed = append(failed, suite)
			progress("suite %s failed: %v", suite, err)
		}
		fmt.Fprintf(os.Stderr, "suite %s took %s\n", suite, time.Since(started).Round(time.Second))
	}
	res.summary(os.Stderr)
	if len(failed) > 0 {
		b.stop()
		fail(fmt.Errorf("suites failed: %s", strings.Join(failed, ", ")))
	}
}

// scenario is P root policies bound to N clusters.
type scenario struct{ policies, clusters int }

func (s scenario) replicas() int { return s.policies * s.clusters }

// runs is how often the scenario runs: large ones take minutes.
func (s scenario) runs(runs, largeRuns int) int {
	if s.replicas() > largeReplicas {
		return largeRuns
	}
	return runs
}

// key is the scenario's part of a benchmark name.
func (s scenario) key() string { return fmt.Sprintf("policies=%d/clusters=%d", s.policies, s.clusters) }

// parseScenarios reads "1x1000,100x1000" (an empty string is no scenario).
func parseScenarios(s string) ([]scenario, error) {
	var out []scenario
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		ps, ns, ok := strings.Cut(f, "x")
		p, err1 := strconv.Atoi(ps)
		n, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || p < 1 || n < 1 {
			return nil, fmt.Errorf("%q is not POLICIESxCLUSTERS with positive numbers", f)
		}
		out = append(out, scenario{policies: p, clusters: n})
	}
	return out, nil
}

// parseDurations reads "1s,100ms".
func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a non-negative duration", f)
		}
		out = append(out, d)
	}
	return out, nil
}

// bench holds the hub plane shared by the propagation, memory and rollout
// suites, started on first use, and its ManagedClusters.
type bench struct {
	writers     int
	hubBin      string
	hubArgs     []string
	hubLog      *os.File
	perDecision int
	res         *results

	plane    *localplane.Plane
	admin    client.WithWatch // no client-side rate limit: the floor's client too
	clusters int              // ManagedClusters and namespaces created so far
}

// stop stops the plane; the next ensureClusters starts a fresh one.
func (b *bench) stop() {
	if b.plane != nil {
		_ = b.plane.Stop()
		b.plane = nil
		b.clusters = 0
	}
}

// ensureClusters starts the plane if needed and creates ManagedClusters and
// their namespaces until there are n.
func (b *bench) ensureClusters(ctx context.Context, n int) error {
	if b.plane == nil {
		if _, err := os.Stat(b.hubBin); err != nil {
			return fmt.Errorf("%s: run `make build` first", b.hubBin)
		}
		plane, err := localplane.Start("bench-hub")
		if err != nil {
			return err
		}
		b.plane = plane
		unlimited := rest.CopyConfig(plane.Config)
		unlimited.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		if b.admin, err = client.NewWithWatch(unlimited, client.Options{Scheme: scheme.New()}); err != nil {
			return err
		}
		if err := localplane.EnsureNamespace(ctx, b.admin, benchNamespace); err != nil {
			return err
		}
	}
	if n <= b.clusters {
		return nil
	}
	progress("setting up ManagedClusters and namespaces %d to %d", b.clusters, n)
	from := b.clusters
	if err := b.parallel(n-from, func(i int) error {
		name := clusterName(from + i)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if err := b.admin.Create(ctx, mc); err != nil {
			return err
		}
		return b.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}); err != nil {
		return err
	}
	b.clusters = n
	return nil
}

func clusterName(i int) string { return fmt.Sprintf("bench-cluster-%05d", i) }

// parallel runs f(i) for i in [0,n) on b.writers goroutines.
func (b *bench) parallel(n int, f func(i int) error) error {
	return localplane.Parallel(n, b.writers, f)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
