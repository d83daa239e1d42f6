// Command fleetpolicy-bench measures the hub controller against a floor measured
// in the same run, on the same local API server: the time until one root policy's
// replicas exist in every bound cluster namespace, and until they all reflect a
// root update, versus creating and updating the very same replicas directly with
// one client, --floor-writers concurrent writers and no client-side rate limit.
// It also reports the controller process's CPU seconds and peak RSS. Figures are
// medians over --runs. `make bench` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

const benchNamespace = "bench"

func main() {
	sizes := flag.String("clusters", "1000,3000", "comma-separated fleet sizes")
	perDecision := flag.Int("per-decision", 100, "clusters per PlacementDecision")
	runs := flag.Int("runs", 3, "runs per size; figures are medians")
	floorWriters := flag.Int("floor-writers", 10, "concurrent writers of the floor")
	hubBin := flag.String("hub", "bin/fleetpolicy-hub", "hub controller binary, relative to the repository root")
	hubArgs := flag.String("hub-args", "", "extra arguments for the hub controller, space-separated (e.g. --cpu-profile=/tmp/hub.pprof)")
	suites := flag.String("suites", "propagation,admission", "comma-separated suites to run: propagation, admission")
	admissionClusters := flag.Int("admission-clusters", 1000, "ManagedClusters the placement policies decide over (admission suite)")
	admissionRequests := flag.Int("admission-requests", 100, "Policy creates measured per webhook (admission suite)")
	flag.Parse()

	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "fleetpolicy-bench: bad --clusters entry %q\n", s)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	ctx := context.Background()
	for _, suite := range strings.Split(*suites, ",") {
		var err error
		switch strings.TrimSpace(suite) {
		case "propagation":
			err = run(ctx, os.Stdout, ns, *perDecision, *runs, *floorWriters, *hubBin, strings.Fields(*hubArgs))
		case "admission":
			var root string
			if root, err = localplane.RepoRoot(); err == nil {
				err = benchAdmission(ctx, os.Stdout, root, *admissionClusters, *admissionRequests)
			}
		default:
			err = fmt.Errorf("unknown suite %q", suite)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetpolicy-bench:", err)
			os.Exit(1)
		}
	}
}

type bench struct {
	plane   *localplane.Plane
	admin   client.WithWatch
	floor   client.Client // no client-side rate limit
	writers int
	hubBin  string
	hubArgs []string
}

// sample is one run's figures.
type sample struct {
	ctrlCreate, ctrlUpdate, floorCreate, floorUpdate time.Duration
	cpu                                              time.Duration
	rssBytes                                         int64
}

func run(ctx context.Context, out io.Writer, sizes []int, perDecision, runs, writers int, hubBin string, hubArgs []string) error {
	root, err := localplane.RepoRoot()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(hubBin) {
		hubBin = filepath.Join(root, hubBin)
	}
	if _, err := os.Stat(hubBin); err != nil {
		return fmt.Errorf("%s: run `make build` first", hubBin)
	}
	plane, err := localplane.Start("bench-hub")
	if err != nil {
		return err
	}
	defer plane.Stop()
	unlimited := rest.CopyConfig(plane.Config)
	unlimited.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	s := scheme.New()
	admin, err := client.NewWithWatch(unlimited, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	b := &bench{plane: plane, admin: admin, floor: admin, writers: writers, hubBin: hubBin, hubArgs: hubArgs}

	maxN := slices.Max(sizes)
	fmt.Fprintf(out, "setting up %d ManagedClusters and their namespaces...\n", maxN)
	if err := b.setupClusters(ctx, maxN); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nhub propagation: 1 root policy, PlacementDecisions of %d, %d run(s), medians\n", perDecision, runs)
	fmt.Fprintf(out, "%-9s %-24s %10s %10s %7s %s\n", "clusters", "figure", "hub", "floor", "ratio", "target")
	for _, n := range sizes {
		var samples []sample
		for r := range runs {
			smp, err := b.runOnce(ctx, n, perDecision, fmt.Sprintf("p%d-%d", n, r))
			if err != nil {
				return fmt.Errorf("%d clusters, run %d: %w", n, r+1, err)
			}
			samples = append(samples, smp)
		}
		report(out, n, samples)
	}
	return nil
}

func clusterName(i int) string { return fmt.Sprintf("bench-cluster-%05d", i) }

// parallel runs f(i) for i in [0,n) on b.writers goroutines.
func (b *bench) parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	next := make(chan int)
	for range b.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

func (b *bench) setupClusters(ctx context.Context, n int) error {
	if err := localplane.EnsureNamespace(ctx, b.admin, benchNamespace); err != nil {
		return err
	}
	return b.parallel(n, func(i int) error {
		name := clusterName(i)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if err := b.admin.Create(ctx, mc); err != nil {
			return err
		}
		return b.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
}

// rootPolicy is the benchmarked root policy; version changes its template.
func rootPolicy(name string, version int) *policyv1.Policy {
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name},
		Spec: policyv1.PolicySpec{
			RemediationAction: policyv1.Inform,
			PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(fmt.Sprintf(
				`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"bench"},`+
					`"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":`+
					`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench","namespace":"default"},"data":{"version":"%d"}}}]}}`, version))}}},
		},
	}
}

// setupPlacement creates a Placement with its PlacementDecisions (perDecision
// clusters each) selecting the first n clusters, and a binding of policy to it.
func (b *bench) setupPlacement(ctx context.Context, n, perDecision int, policy string) error {
	pl := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: policy}}
	if err := b.admin.Create(ctx, pl); err != nil {
		return err
	}
	for d := 0; d*perDecision < n; d++ {
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Namespace: benchNamespace, Name: fmt.Sprintf("%s-decision-%d", policy, d),
			Labels: map[string]string{clusterv1beta1.PlacementLabel: policy},
		}}
		if err := b.admin.Create(ctx, pd); err != nil {
			return err
		}
		for i := d * perDecision; i < min(n, (d+1)*perDecision); i++ {
			pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: clusterName(i)})
		}
		if err := b.admin.Status().Update(ctx, pd); err != nil {
			return err
		}
	}
	return b.admin.Create(ctx, &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: benchNamespace, Name: policy},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: policy},
		Subjects:     []policyv1.Subject{{APIGroup: "policy.open-cluster-management.io", Kind: "Policy", Name: policy}},
	})
}

// replicaObserver follows one root's replicas as the API server reports them,
// re-listing if the watch closes, and tells when n cluster namespaces hold a
// replica whose template mentions a marker.
type replicaObserver struct {
	c        client.WithWatch
	root     string
	versions map[string]string // namespace -> template of the replica seen last
	w        watch.Interface
	rv       string
}

func (b *bench) observe(ctx context.Context, root string) (*replicaObserver, error) {
	o := &replicaObserver{c: b.admin, root: root, versions: map[string]string{}}
	return o, o.relist(ctx)
}

func (o *replicaObserver) relist(ctx context.Context) error {
	if o.w != nil {
		o.w.Stop()
	}
	list := &policyv1.PolicyList{}
	labels := client.MatchingLabels{replication.LabelRootPolicy: o.root}
	if err := o.c.List(ctx, list, labels); err != nil {
		return err
	}
	clear(o.versions)
	for i := range list.Items {
		o.record(&list.Items[i])
	}
	w, err := o.c.Watch(ctx, &policyv1.PolicyList{}, labels, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	o.w = w
	return err
}

func (o *replicaObserver) record(p *policyv1.Policy) {
	if len(p.Spec.PolicyTemplates) > 0 {
		o.versions[p.Namespace] = string(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
	}
}

func (o *replicaObserver) count(marker string) int {
	n := 0
	for _, v := range o.versions {
		if strings.Contains(v, marker) {
			n++
		}
	}
	return n
}

func (o *replicaObserver) stop() {
	if o.w != nil {
		o.w.Stop()
	}
}

// waitFor returns when n namespaces hold a replica mentioning marker.
func (o *replicaObserver) waitFor(ctx context.Context, n int, marker string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for o.count(marker) < n {
		select {
		case ev, ok := <-o.w.ResultChan():
			if !ok || ev.Type == watch.Error {
				if err := o.relist(ctx); err != nil {
					return time.Time{}, err
				}
				continue
			}
			p, ok := ev.Object.(*policyv1.Policy)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(o.versions, p.Namespace)
			} else {
				o.record(p)
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("timed out with %d of %d replicas at %s", o.count(marker), n, marker)
		}
	}
	return time.Now(), nil
}

func marker(version int) string { return fmt.Sprintf(`"version":"%d"`, version) }

func (b *bench) runOnce(ctx context.Context, n, perDecision int, name string) (sample, error) {
	var smp sample
	rootKey := replication.Name(benchNamespace, name)

	// The floor: the same replicas, written directly.
	floorName := name + "-floor"
	obs, err := b.observe(ctx, replication.Name(benchNamespace, floorName))
	if err != nil {
		return smp, err
	}
	start := time.Now()
	if err := b.parallel(n, func(i int) error {
		return b.floor.Create(ctx, replication.Build(rootPolicy(floorName, 1), clusterName(i), policyv1.Inform, nil))
	}); err != nil {
		return smp, err
	}
	done, err := obs.waitFor(ctx, n, marker(1), 5*time.Minute)
	if err != nil {
		return smp, err
	}
	smp.floorCreate = done.Sub(start)
	start = time.Now()
	if err := b.parallel(n, func(i int) error {
		p := replication.Build(rootPolicy(floorName, 2), clusterName(i), policyv1.Inform, nil)
		existing := &policyv1.Policy{}
		if err := b.floor.Get(ctx, client.ObjectKeyFromObject(p), existing); err != nil {
			return err
		}
		p.ResourceVersion = existing.ResourceVersion
		return b.floor.Update(ctx, p)
	}); err != nil {
		return smp, err
	}
	done, err = obs.waitFor(ctx, n, marker(2), 5*time.Minute)
	obs.stop()
	if err != nil {
		return smp, err
	}
	smp.floorUpdate = done.Sub(start)
	if err := b.deleteReplicas(ctx, n, replication.Name(benchNamespace, floorName)); err != nil {
		return smp, err
	}

	// The controller, as a separate process so its CPU and memory are its own.
	if err := b.setupPlacement(ctx, n, perDecision, name); err != nil {
		return smp, err
	}
	cmd := exec.Command(b.hubBin, append([]string{"--kubeconfig", b.plane.KubeconfigPath,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--placement=false", "--zap-log-level", "error"}, b.hubArgs...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return smp, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	time.Sleep(2 * time.Second) // let the controller start and sync its caches
	obs, err = b.observe(ctx, rootKey)
	if err != nil {
		return smp, err
	}
	defer obs.stop()
	start = time.Now()
	if err := b.admin.Create(ctx, rootPolicy(name, 1)); err != nil {
		return smp, err
	}
	if done, err = obs.waitFor(ctx, n, marker(1), 5*time.Minute); err != nil {
		return smp, err
	}
	smp.ctrlCreate = done.Sub(start)

	root := &policyv1.Policy{}
	start = time.Now()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := b.admin.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, root); err != nil {
			return err
		}
		root.Spec = rootPolicy(name, 2).Spec
		return b.admin.Update(ctx, root)
	}); err != nil {
		return smp, err
	}
	if done, err = obs.waitFor(ctx, n, marker(2), 5*time.Minute); err != nil {
		return smp, err
	}
	smp.ctrlUpdate = done.Sub(start)

	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	stopped = true
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		smp.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		smp.rssBytes = ru.Maxrss * 1024 // kilobytes on Linux
	}
	if err := b.admin.Delete(ctx, root); err != nil {
		return smp, err
	}
	return smp, b.deleteReplicas(ctx, n, rootKey)
}

func (b *bench) deleteReplicas(ctx context.Context, n int, name string) error {
	return b.parallel(n, func(i int) error {
		p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName(i), Name: name}}
		return client.IgnoreNotFound(b.admin.Delete(ctx, p))
	})
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func pick[T int64 | time.Duration](samples []sample, f func(sample) T) T {
	xs := make([]T, len(samples))
	for i, s := range samples {
		xs[i] = f(s)
	}
	return median(xs)
}

func report(out io.Writer, n int, samples []sample) {
	cc := pick(samples, func(s sample) time.Duration { return s.ctrlCreate })
	fc := pick(samples, func(s sample) time.Duration { return s.floorCreate })
	cu := pick(samples, func(s sample) time.Duration { return s.ctrlUpdate })
	fu := pick(samples, func(s sample) time.Duration { return s.floorUpdate })
	cpu := pick(samples, func(s sample) time.Duration { return s.cpu })
	rss := pick(samples, func(s sample) int64 { return s.rssBytes })
	secs := func(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
	fmt.Fprintf(out, "%-9d %-24s %10s %10s %7.2f %s\n", n, "create all replicas", secs(cc), secs(fc), cc.Seconds()/fc.Seconds(), "<= 1.30")
	fmt.Fprintf(out, "%-9d %-24s %10s %10s %7.2f %s\n", n, "update all replicas", secs(cu), secs(fu), cu.Seconds()/fu.Seconds(), "<= 1.30")
	perK := cpu.Seconds() / (float64(n) / 1000) // the whole run: start, create and update
	fmt.Fprintf(out, "%-9d %-24s %10s %10s %7s %s\n", n, "CPU s per 1000 replicas", fmt.Sprintf("%.2fs", perK), "", "", "<= 0.50s")
	fmt.Fprintf(out, "%-9d %-24s %10s %10s %7s %s\n", n, "peak RSS", fmt.Sprintf("%dMiB", rss>>20), "", "", "<= 80MiB at 3000")
}
