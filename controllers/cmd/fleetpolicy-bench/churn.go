package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/compliance"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// churnSettings are the compliance churn suite's: one root on clusters
// clusters, a fraction of whose replicas change compliance every second for
// seconds seconds, the changes written by writers goroutines as spokes would.
type churnSettings struct {
	clusters int
	fraction float64
	seconds  int
	writers  int
}

// churnSample is what one churn run measured, of the hub or of the floor.
type churnSample struct {
	lags    []time.Duration // one per status change the root showed
	changes int             // status changes written
	cpu     time.Duration   // the process's CPU from the first change until the root showed the last
	// writes counts the process's root status writes over the same span,
	// those the API server accepted and those it refused as conflicts.
	writes statusWriteCount
}

// churn runs the compliance churn suite runs times: the floor, then the hub.
func (b *bench) churn(ctx context.Context, cs churnSettings, runs int) error {
	if err := b.ensureClusters(ctx, cs.clusters); err != nil {
		return err
	}
	name := fmt.Sprintf("HubComplianceChurn/clusters=%d/changes-per-s=%d", cs.clusters, cs.perTick())
	for r := range runs {
		run := fmt.Sprintf("c%d-%d", cs.clusters, r)
		progress("compliance churn over %d clusters, run %d of %d: floor", cs.clusters, r+1, runs)
		floor, err := b.churnRun(ctx, cs, run+"-floor", b.startChurnFloor)
		if err != nil {
			return errors.Join(fmt.Errorf("run %d, floor: %w", r+1, err), b.cleanup(ctx, run+"-floor", cs.clusters))
		}
		progress("compliance churn, run %d of %d: hub", r+1, runs)
		h, err := b.churnRun(ctx, cs, run, func(string) (churnProcess, error) { return b.startHub() })
		if err != nil {
			return errors.Join(fmt.Errorf("run %d, hub: %w", r+1, err), b.cleanup(ctx, run, cs.clusters))
		}
		for _, q := range []struct {
			name string
			p    float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			lag, floorLag := quantile(h.lags, q.p), quantile(floor.lags, q.p)
			b.res.line(name+"/lag-"+q.name, lag, withFloor(lag.Seconds(), floorLag.Seconds(), "s")...)
		}
		b.res.line(name+"/cpu", 0, withFloor(h.cpu.Seconds()/(float64(h.changes)/1000),
			floor.cpu.Seconds()/(float64(floor.changes)/1000), "cpu-s/1000-changes")...)
		b.res.line(name+"/status-writes", 0,
			figure{h.writes.accepted, "writes"}, figure{floor.writes.accepted, "floor-writes"},
			figure{h.writes.conflicts, "conflicts"}, figure{floor.writes.conflicts, "floor-conflicts"})
	}
	return nil
}

func (cs churnSettings) perTick() int { return max(1, int(float64(cs.clusters)*cs.fraction)) }

// churnProcess is the process whose root status writes a churn run times:
// the hub or the floor.
type churnProcess interface {
	pid() int
	stop() (cpu time.Duration, rssBytes int64)
}

func (h *hubProcess) pid() int { return h.cmd.Process.Pid }

// churnRun places one root on the suite's clusters and starts the process
// (start) that keeps the root's status. The hub writes the replicas itself;
// for the floor the benchmark writes them. Then every replica reports
// Compliant and the root is awaited to show it; then, every second, the next
// fraction of the clusters flips compliance (a status merge patch per
// replica, as a spoke writes it: reportPatch), each change timed from the API
// server's answer until a watch of the root sees the cluster's new state in
// its status. The process's CPU is read from /proc before the first change and
// after the root showed the last.
func (b *bench) churnRun(ctx context.Context, cs churnSettings, run string, start func(run string) (churnProcess, error)) (churnSample, error) {
	var s churnSample
	rootName := rootNames(run, 1)[0]
	if err := b.setupPlacement(ctx, run, b.decisionsOver(cs.clusters), false); err != nil {
		return s, err
	}
	proc, err := start(run)
	if err != nil {
		return s, err
	}
	defer proc.stop()
	count := newReplicaCount(func(*policyv1.Policy) int { return 1 })
	stopFollowing, err := follow(ctx, b.admin, run, count)
	if err != nil {
		return s, err
	}
	defer stopFollowing()
	if err := b.bindRoots(ctx, run, []string{rootName}); err != nil {
		return s, err
	}
	root := rootPolicy(rootName, run, 1)
	if err := b.admin.Create(ctx, root); err != nil {
		return s, err
	}
	if _, isHub := proc.(*hubProcess); !isHub {
		// The floor keeps the status only: the replicas are the benchmark's.
		if err := b.parallel(cs.clusters, func(i int) error {
			return b.admin.Create(ctx, replication.Build(root, clusterName(i), policyv1.Inform, nil))
		}); err != nil {
			return s, err
		}
	}
	if _, err := count.waitFor(cs.clusters, 1, waitTimeout(cs.clusters)); err != nil {
		return s, err
	}
	stopFollowing()

	shown := newRootStatusLag()
	stopWatching, err := watchRoot(ctx, b.admin, root, shown)
	if err != nil {
		return s, err
	}
	defer stopWatching()
	state := make([]policyv1.ComplianceState, cs.clusters)
	report := func(clusters []int) error {
		return (&bench{writers: cs.writers}).parallel(len(clusters), func(i int) error {
			c := clusters[i]
			replica := &policyv1.Policy{}
			replica.Namespace, replica.Name = clusterName(c), replication.Name(root.Namespace, root.Name)
			patch := reportPatch(replica, state[c], time.Now())
			if err := b.admin.Status().Patch(ctx, replica, client.RawPatch(types.MergePatchType, patch)); err != nil {
				return err
			}
			shown.expect(clusterName(c), state[c], time.Now())
			return nil
		})
	}
	all := make([]int, cs.clusters)
	for i := range all {
		all[i], state[i] = i, policyv1.Compliant
	}
	if err := report(all); err != nil {
		return s, err
	}
	if err := shown.waitShown(time.Minute); err != nil {
		return s, fmt.Errorf("before the churn: %w", err)
	}
	shown.reset()

	cpuBefore, err := localplane.CPUTime(proc.pid())
	if err != nil {
		return s, err
	}
	writesBefore, err := b.statusWrites(ctx)
	if err != nil {
		return s, err
	}
	next := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for range cs.seconds {
		batch := make([]int, cs.perTick())
		for i := range batch {
			batch[i] = next
			next = (next + 1) % cs.clusters
			if state[batch[i]] == policyv1.Compliant {
				state[batch[i]] = policyv1.NonCompliant
			} else {
				state[batch[i]] = policyv1.Compliant
			}
		}
		if err := report(batch); err != nil {
			return s, err
		}
		s.changes += len(batch)
		<-tick.C
	}
	if err := shown.waitShown(time.Minute); err != nil {
		return s, err
	}
	cpuAfter, err := localplane.CPUTime(proc.pid())
	if err != nil {
		return s, err
	}
	writesAfter, err := b.statusWrites(ctx)
	if err != nil {
		return s, err
	}
	s.cpu, s.lags = cpuAfter-cpuBefore, shown.lags()
	s.writes = statusWriteCount{accepted: writesAfter.accepted - writesBefore.accepted,
		conflicts: writesAfter.conflicts - writesBefore.conflicts}
	stopWatching()
	proc.stop()
	return s, b.cleanup(ctx, run, cs.clusters)
}

// reportPatch is the status merge patch of a spoke's report on replica (of a
// root with one template, the benchmark's): its compliance, and the
// template's details with the report's compliance event at the head of its
// history, named as client-go names an event (<object>.<hex unix nanoseconds>)
// and timed at. Every report moves the replica's last evaluation, as a real
// spoke's do (rollout.EvaluatedAt); the benchmark keeps only the newest event.
func reportPatch(replica *policyv1.Policy, state policyv1.ComplianceState, at time.Time) []byte {
	event := policyv1.ComplianceHistory{LastTimestamp: metav1.NewTime(at), Message: string(state) + "; benchmark report",
		EventName: fmt.Sprintf("%s.%s.%x", replica.Namespace, replica.Name, at.UnixNano())}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{ // strings and times only: cannot fail
		"compliant": state,
		"details": []map[string]any{{"templateMeta": map[string]string{"name": "bench"},
			"compliant": state, "history": []policyv1.ComplianceHistory{event}}},
	}})
	return patch
}

// statusWriteCount counts writes of Policy statuses (PUT .../status).
type statusWriteCount struct{ accepted, conflicts float64 }

// statusWrites reads from the API server's metrics (apiserver_request_total)
// how many Policy status updates it has answered so far, accepted (200) and
// refused as conflicts (409). In a churn run only the process keeping the
// root status updates a Policy's status (the benchmark patches replicas').
func (b *bench) statusWrites(ctx context.Context) (statusWriteCount, error) {
	var n statusWriteCount
	cs, err := kubernetes.NewForConfig(b.plane.Config)
	if err != nil {
		return n, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return n, fmt.Errorf("the API server's metrics: %w", err)
	}
	return countStatusWrites(raw)
}

// countStatusWrites counts the Policy status updates in the API server's
// metrics text (see statusWrites).
func countStatusWrites(raw []byte) (statusWriteCount, error) {
	var n statusWriteCount
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return n, fmt.Errorf("the API server's metrics: %w", err)
	}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["resource"] != "policies" || l["subresource"] != "status" || l["verb"] != "PUT" {
			continue
		}
		switch l["code"] {
		case "200":
			n.accepted += m.GetCounter().GetValue()
		case "409":
			n.conflicts += m.GetCounter().GetValue()
		}
	}
	return n, nil
}

// rootStatusLag pairs the status changes the benchmark wrote with the root
// status that shows them.
type rootStatusLag struct {
	mu      sync.Mutex
	pending map[string]pendingChange // cluster -> the last change not yet shown
	lag     []time.Duration
	drained chan struct{} // closed and replaced when pending empties
}

type pendingChange struct {
	state policyv1.ComplianceState
	at    time.Time
}

func newRootStatusLag() *rootStatusLag {
	return &rootStatusLag{pending: map[string]pendingChange{}, drained: make(chan struct{})}
}

// expect records that cluster's replica reported state at.
func (r *rootStatusLag) expect(cluster string, state policyv1.ComplianceState, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[cluster] = pendingChange{state, at}
}

// see takes a root status seen at.
func (r *rootStatusLag) see(root *policyv1.Policy, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range root.Status.Status {
		if st == nil {
			continue
		}
		if p, ok := r.pending[st.ClusterName]; ok && p.state == st.ComplianceState {
			r.lag = append(r.lag, at.Sub(p.at))
			delete(r.pending, st.ClusterName)
		}
	}
	if len(r.pending) == 0 {
		close(r.drained)
		r.drained = make(chan struct{})
	}
}

func (r *rootStatusLag) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lag = nil
}

func (r *rootStatusLag) lags() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lag)
}

// waitShown waits until the root has shown every change written.
func (r *rootStatusLag) waitShown(timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		left, drained := len(r.pending), r.drained
		r.mu.Unlock()
		if left == 0 {
			return nil
		}
		select {
		case <-drained:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("after %s the root still does not show %d status changes", timeout, left)
		}
	}
}

// watchRoot watches root and hands every version of it to sink.
func watchRoot(ctx context.Context, c client.WithWatch, root *policyv1.Policy, sink *rootStatusLag) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	w, err := c.Watch(ctx, &policyv1.PolicyList{}, client.InNamespace(root.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", root.Name)})
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*policyv1.Policy); ok && ev.Type != watch.Bookmark {
				sink.see(p, time.Now())
			}
		}
	}()
	return func() { w.Stop(); cancel(); <-done }, nil
}

func quantile(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// churnFloorFlag makes this command the floor of one churn run (see
// runChurnFloor) instead of the benchmark; the benchmark starts it.
const churnFloorFlag = "churn-floor"

// runChurnFloor is the least a process that keeps a root's status in line with
// its replicas' must do, and the floor the hub's churn lag and CPU are
// measured against: it watches the run's replicas through a controller-runtime
// cache (managed fields stripped, as the hub's) and, at most once per
// batchDelay (the hub's default --status-batch-delay), after a replica changed,
// writes the root's status.status and status.compliant from its cache with one
// status update. Each cluster's entry has the fields the hub writes for a root
// not rolled out progressively: the compliance and the cluster's rollout
// progress (rolloutStatus Succeeded once the replica reported, Progressing
// before; the root's generation; the time the rolloutStatus last changed), so
// that both write, store and send the same root status. It prints "ready"
// once its cache has synced and runs until it is killed.
func runChurnFloor(kubeconfig, run string, batchDelay time.Duration) error {
	ctx := context.Background()
	cfg, c, informer, err := replicaCache(ctx, kubeconfig, run)
	if err != nil {
		return err
	}
	writer, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the cache did not sync")
	}
	fmt.Println("ready")
	for range changed {
		time.Sleep(batchDelay)
		policies := &policyv1.PolicyList{}
		if err := c.List(ctx, policies); err != nil {
			return err
		}
		var root *policyv1.Policy
		for i := range policies.Items {
			if !replication.IsReplica(&policies.Items[i]) {
				root = policies.Items[i].DeepCopy()
			}
		}
		if root == nil {
			continue
		}
		was := map[string]*policyv1.CompliancePerClusterStatus{}
		for _, e := range root.Status.Status {
			was[e.ClusterName] = e
		}
		now := metav1.NewMicroTime(time.Now())
		var status policyv1.PolicyStatus
		var states []policyv1.ComplianceState
		for i := range policies.Items {
			p := &policies.Items[i]
			if !replication.IsReplica(p) {
				continue
			}
			// The fields the hub writes per cluster (see the doc comment).
			e := &policyv1.CompliancePerClusterStatus{ClusterName: p.Namespace, ClusterNamespace: p.Namespace,
				ComplianceState: p.Status.ComplianceState, RolloutStatus: policyv1.RolloutProgressing,
				RolloutGeneration: root.Generation, RolloutLastTransitionTime: &now}
			if e.ComplianceState != "" {
				e.RolloutStatus = policyv1.RolloutSucceeded
			}
			if w := was[e.ClusterName]; w != nil && w.RolloutStatus == e.RolloutStatus && w.RolloutLastTransitionTime != nil {
				e.RolloutLastTransitionTime = w.RolloutLastTransitionTime
			}
			status.Status = append(status.Status, e)
			states = append(states, p.Status.ComplianceState)
		}
		slices.SortFunc(status.Status, func(a, b *policyv1.CompliancePerClusterStatus) int {
			return strings.Compare(a.ClusterName, b.ClusterName)
		})
		status.ComplianceState = compliance.Aggregate(states) // as the hub aggregates
		root.Status = status
		if err := writer.Status().Update(ctx, root); err != nil {
			fmt.Fprintln(os.Stderr, "churn floor:", err) // a conflict: the next change writes again
			poke(nil)
		}
	}
	return nil
}

// replicaCache is the floors' client configuration for kubeconfig (no
// client-side rate limit) and their cache of run's policies (roots and
// replicas): controller-runtime's, with managed fields stripped as the hub
// strips them. The cache is not started.
func replicaCache(ctx context.Context, kubeconfig, run string) (*rest.Config, cache.Cache, cache.Informer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{runLabel: run})})
	if err != nil {
		return nil, nil, nil, err
	}
	informer, err := c.GetInformer(ctx, &policyv1.Policy{})
	return cfg, c, informer, err
}

// cacheFloorFlag makes this command the memory floor of one memory run (see
// runCacheFloor) instead of the benchmark; the benchmark starts it.
const cacheFloorFlag = "cache-floor"

// runCacheFloor is the memory floor of the hub: a process that only caches
// run's policies (replicaCache), as any controller keeping their status must.
// Once its cache has synced it prints its peak RSS ("peak-rss N",
// localplane.PeakRSS) and ends.
func runCacheFloor(kubeconfig, run string) error {
	ctx := context.Background()
	_, c, _, err := replicaCache(ctx, kubeconfig, run)
	if err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the cache did not sync")
	}
	peak, err := localplane.PeakRSS(os.Getpid())
	if err != nil {
		return err
	}
	fmt.Println("peak-rss", peak)
	return nil
}

// startChurnFloor starts this command as the churn floor of run and waits
// until its cache has synced.
func (b *bench) startChurnFloor(run string) (churnProcess, error) {
	f, err := b.startFloorProcess(churnFloorFlag, "--run", run)
	if err != nil {
		return nil, err
	}
	if _, err := f.next("ready"); err != nil {
		f.kill()
		return nil, err
	}
	return f, nil
}

func (f *floorProcess) pid() int { return f.cmd.Process.Pid }

// stop kills the floor; its CPU is read from /proc, not returned.
func (f *floorProcess) stop() (time.Duration, int64) {
	f.kill()
	return 0, 0
}
