package hub

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestPropagatorWiring runs the propagator on a plane of its own, without a
// hub controller: only the test reconciles, so that it controls what the
// cache shows and what runs at once.
func TestPropagatorWiring(t *testing.T) {
	plane, err := localplane.Start("hub-wiring")
	if err != nil {
		testkit.FatalOrSkip(t, "plane", err)
	}
	t.Cleanup(func() { _ = plane.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	clusters := make([]string, 40)
	for i := range clusters {
		clusters[i] = fmt.Sprintf("wiring-%02d", i)
		if err := localplane.EnsureCluster(ctx, plane.Client, clusters[i]); err != nil {
			t.Fatal(err)
		}
	}
	// The hub's cache and indexes, and no controller.
	mgr, err := ctrl.NewManager(plane.Config, ctrl.Options{Scheme: scheme.New(), Cache: cacheOptions(false, false),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := setupIndexes(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	index, err := policyIndex(ctx, mgr.GetCache())
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	writes := &requestCounter{counts: map[string]int{}}
	cfg := rest.CopyConfig(plane.Config)
	cfg.Wrap(writes.wrap)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	policies, err := apiutil.RESTClientForGVK(policyv1.GroupVersion.WithKind("Policy"), false, false, cfg,
		serializer.NewCodecFactory(mgr.GetScheme()), httpClient)
	if err != nil {
		t.Fatal(err)
	}
	w := wiring{ctx: ctx, plane: plane, mgr: mgr, index: index, policies: policies, writes: writes, clusters: clusters}
	t.Run("holds back what the cache has not seen", w.holdsBackWhatTheCacheHasNotSeen)
	t.Run("shares the hub-wide write slots", w.sharesTheWriteSlots)
	t.Run("writes every spec before the rollout status patches", w.writesSpecsBeforeRolloutStatus)
}

// wiring is what TestPropagatorWiring's cases share.
type wiring struct {
	ctx      context.Context
	plane    *localplane.Plane
	mgr      ctrl.Manager
	index    replicaIndex // the cache's Policy index
	policies rest.Interface
	writes   *requestCounter
	clusters []string
}

// holdsBackWhatTheCacheHasNotSeen: with a cache that lags behind the
// propagator's writes, as the hub's informer does under load, a reconcile
// whose cache still shows the root before its own last status write writes
// nothing and looks again soon; one whose cache still lacks the replicas it
// created does not create them again; and once settled, a status-only
// reconcile reuses the bindings it resolved instead of reading them again.
// Each fails if Reconcile stops asking ownWrites or settledRoots.
func (w wiring) holdsBackWhatTheCacheHasNotSeen(t *testing.T) {
	ctx, mgr, writes, clusters := w.ctx, w.mgr, w.writes, w.clusters
	const ns = "wiring"
	testkit.Apply(t, w.plane.Client, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: p, namespace: %[1]s}
spec:
  disabled: false
  remediationAction: inform
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: p-cm}
      spec:
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: default}}
`, ns))
	testkit.Apply(t, w.plane.Client, testkit.PlacementRuleBinding(ns, "r", clusters, "p"))

	lagging := &fakeLaggingCache{Client: mgr.GetClient(), index: w.index, reads: map[string]int{}}
	p := NewPropagator(lagging, lagging, w.policies, mgr.GetEventRecorder("wiring-test"), clock.RealClock{})
	p.Writers = 8
	key := types.NamespacedName{Namespace: ns, Name: "p"}
	reconcile := func(what string) ctrl.Result {
		t.Helper()
		writes.reset()
		lagging.resetReads()
		res, err := p.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return res
	}
	// waitForCache waits until the real cache shows the root as the API
	// server has it, and every replica.
	waitForCache := func() {
		t.Helper()
		testkit.Eventually(t, 20*time.Second, "the cache shows the root and the replicas", func() string {
			cached, stored := &policyv1.Policy{}, &policyv1.Policy{}
			if err := mgr.GetClient().Get(ctx, key, cached); err != nil {
				return err.Error()
			}
			if err := mgr.GetAPIReader().Get(ctx, key, stored); err != nil {
				return err.Error()
			}
			replicas, err := (&Propagator{Replicas: w.index}).replicasOf(key)
			if err != nil {
				return err.Error()
			}
			if cached.ResourceVersion != stored.ResourceVersion || len(replicas) != len(clusters) {
				return fmt.Sprintf("root at %s in the cache, %s stored; %d replicas", cached.ResourceVersion, stored.ResourceVersion, len(replicas))
			}
			return ""
		})
	}

	// The cache holds the root before its first status write and no replica.
	lagging.hold(ctx, t, key)
	reconcile("first reconcile")
	if got := writes.count(); got["POST"] != len(clusters) || got["PUT status"] != 1 {
		t.Fatalf("first reconcile: %v requests, want %d creates and a status write", got, len(clusters))
	}

	// Still the root as it was before the status write: nothing is written,
	// and the reconcile looks again within a second.
	res := reconcile("reconcile over the root before its status write")
	if got := writes.count(); len(got) != 0 {
		t.Fatalf("reconcile over the old root: %v requests, want none", got)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
		t.Fatalf("reconcile over the old root: requeue after %v, want within a second", res.RequeueAfter)
	}

	// The root's status write is seen, the replicas' creates are not: no
	// replica is created again, and the root waits for their events.
	waitForCache()
	lagging.releaseRoot()
	res = reconcile("reconcile without the created replicas")
	if got := writes.count(); len(got) != 0 {
		t.Fatalf("reconcile without the created replicas: %v requests, want none", got)
	}
	if res.RequeueAfter != ownWriteTimeout {
		t.Fatalf("reconcile without the created replicas: requeue after %v, want the in-flight bound %v", res.RequeueAfter, ownWriteTimeout)
	}

	// Everything seen: no replica is written and the root settles (its status
	// may change, now that the replicas exist). Its first status-only
	// reconcile resolves the bindings and keeps them; the next one reads none
	// of the bindings' inputs, only the ManagedCluster of the root's namespace
	// (rootProblem).
	lagging.releaseReplicas()
	reconcile("reconcile with everything seen")
	if got := writes.count(); got["POST"]+got["PUT"]+got["DELETE"] != 0 {
		t.Fatalf("reconcile with everything seen: %v requests, want no replica write", got)
	}
	waitForCache()
	statusOnly := StatusOnlyReconcilesTotal()
	reconcile("first status-only reconcile")
	if n := lagging.read("get *v1.ManagedCluster"); n != 1+len(clusters) {
		t.Fatalf("the first status-only reconcile read %d ManagedClusters, want the root namespace's and the %d bound", n, len(clusters))
	}
	reconcile("second status-only reconcile")
	if got := StatusOnlyReconcilesTotal() - statusOnly; got != 2 {
		t.Fatalf("%v status-only reconciles of a settled root, want 2", got)
	}
	for read, want := range map[string]int{"list *v1.PlacementBindingList": 0, "list *v1beta1.PolicySetList": 0,
		"get *v1.PlacementRule": 0, "get *v1.ManagedCluster": 1} {
		if n := lagging.read(read); n != want {
			t.Errorf("the second status-only reconcile: %s %d times, want %d", read, n, want)
		}
	}
	if got := writes.count(); len(got) != 0 {
		t.Fatalf("status-only reconciles: %v requests, want none", got)
	}
}

// sharesTheWriteSlots: the replica writes of roots reconciled at once never
// have more requests in flight together than the hub-wide slots, however
// many writers each root has.
func (w wiring) sharesTheWriteSlots(t *testing.T) {
	const slots = 3
	p := NewPropagator(w.mgr.GetClient(), w.index, w.policies, w.mgr.GetEventRecorder("wiring-test"), clock.RealClock{})
	p.Writers, p.writeSlots = 8, semaphore.NewWeighted(slots)
	w.writes.reset()
	var wg sync.WaitGroup
	for i := range 3 {
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "wiring-slots", Name: fmt.Sprintf("q%d", i)},
			Spec: policyv1.PolicySpec{RemediationAction: policyv1.Inform, PolicyTemplates: []*policyv1.PolicyTemplate{}}}
		replicas := replication.For(root, nil)
		var planned []replicaWrite
		for _, cluster := range w.clusters {
			planned = append(planned, replicaWrite{replicas: replicas, cluster: cluster, action: policyv1.Inform})
		}
		wg.Go(func() {
			if n, _, _, err := p.write(w.ctx, client.ObjectKeyFromObject(root), root, planned); err != nil || n != len(planned) {
				t.Errorf("root %s: %d of %d writes, %v", root.Name, n, len(planned), err)
			}
		})
	}
	wg.Wait()
	if got := w.writes.count()["POST"]; got != 3*len(w.clusters) {
		t.Fatalf("%d creates, want %d", got, 3*len(w.clusters))
	}
	if peak := w.writes.peakInFlight(); peak > slots {
		t.Fatalf("%d replica writes in flight at once, want at most the %d slots", peak, slots)
	}
}

// writesSpecsBeforeRolloutStatus: of a reconcile's writes, every replica's
// create goes out before the first patch of a rollout status, so that no
// replica reaches its cluster later for another replica's patch; each created
// replica gets its patch.
func (w wiring) writesSpecsBeforeRolloutStatus(t *testing.T) {
	p := NewPropagator(w.mgr.GetClient(), w.index, w.policies, w.mgr.GetEventRecorder("wiring-test"), clock.RealClock{})
	p.Writers = 8
	w.writes.reset()
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "wiring-order", Name: "r"},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Inform, PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	replicas := replication.For(root, nil)
	var planned []replicaWrite
	for _, cluster := range w.clusters {
		planned = append(planned, replicaWrite{replicas: replicas, cluster: cluster, action: policyv1.Inform, rolloutStatus: policyv1.RolloutProgressing})
	}
	if n, _, _, err := p.write(w.ctx, client.ObjectKeyFromObject(root), root, planned); err != nil || n != len(planned) {
		t.Fatalf("%d of %d writes, %v", n, len(planned), err)
	}
	sent := w.writes.sent()
	if got := w.writes.count(); got["POST"] != len(w.clusters) || got["PATCH status"] != len(w.clusters) {
		t.Fatalf("%v requests, want %d creates and as many rollout status patches", got, len(w.clusters))
	}
	lastCreate := -1
	for i, what := range sent {
		if what == "POST" {
			lastCreate = i
		}
	}
	if firstPatch := slices.Index(sent, "PATCH status"); firstPatch < lastCreate {
		t.Fatalf("a rollout status patch (request %d) went out before the last create (request %d): %v", firstPatch, lastCreate, sent)
	}
}

// fakeLaggingCache is a fake of an informer cache that has not yet brought
// back the writes made since hold: until released, reads of the held root and
// of the Policy index (the replicas) answer what the cache held then.
// Everything else reads the real cache. It counts the reads by verb and type.
type fakeLaggingCache struct {
	client.Client
	index    replicaIndex
	mu       sync.Mutex
	root     *policyv1.Policy  // nil: read through
	replicas []policyv1.Policy // used when holding
	holding  bool
	reads    map[string]int
}

func (f *fakeLaggingCache) hold(ctx context.Context, t *testing.T, root types.NamespacedName) {
	t.Helper()
	held := &policyv1.Policy{}
	if err := f.Client.Get(ctx, root, held); err != nil {
		t.Fatal(err)
	}
	replicas := &policyv1.PolicyList{}
	if err := f.Client.List(ctx, replicas, client.InNamespace("")); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.root, f.holding = held, true
	for _, p := range replicas.Items {
		if p.Namespace != root.Namespace {
			f.replicas = append(f.replicas, p)
		}
	}
}

func (f *fakeLaggingCache) releaseRoot() {
	f.mu.Lock()
	f.root = nil
	f.mu.Unlock()
}

func (f *fakeLaggingCache) releaseReplicas() {
	f.mu.Lock()
	f.holding, f.replicas = false, nil
	f.mu.Unlock()
}

func (f *fakeLaggingCache) resetReads() {
	f.mu.Lock()
	f.reads = map[string]int{}
	f.mu.Unlock()
}

// read is how often the verb and type ("get *v1.ManagedCluster") were read.
func (f *fakeLaggingCache) read(what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[what]
}

func (f *fakeLaggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	f.mu.Lock()
	f.reads[fmt.Sprintf("get %T", obj)]++
	held := f.root
	f.mu.Unlock()
	if p, ok := obj.(*policyv1.Policy); ok && held != nil && key == client.ObjectKeyFromObject(held) {
		held.DeepCopyInto(p)
		return nil
	}
	return f.Client.Get(ctx, key, obj, opts...)
}

func (f *fakeLaggingCache) ByIndex(indexName, indexedValue string) ([]any, error) {
	f.mu.Lock()
	f.reads["index "+indexName]++
	holding, replicas := f.holding, f.replicas
	f.mu.Unlock()
	if holding {
		// Every held Policy is a replica of the test's one root.
		out := make([]any, len(replicas))
		for i := range replicas {
			out[i] = replicas[i].DeepCopy()
		}
		return out, nil
	}
	return f.index.ByIndex(indexName, indexedValue)
}

// requestCounter counts the write requests sent through its transport, by
// method ("PUT status" for a status subresource), and the most it had in
// flight at once.
type requestCounter struct {
	mu             sync.Mutex
	counts         map[string]int
	order          []string // what each request was, in the order they were sent
	inFlight, peak int
}

func (r *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			what := req.Method
			if strings.HasSuffix(req.URL.Path, "/status") {
				what += " status"
			}
			r.mu.Lock()
			r.counts[what]++
			r.order = append(r.order, what)
			r.inFlight++
			r.peak = max(r.peak, r.inFlight)
			r.mu.Unlock()
			defer func() {
				r.mu.Lock()
				r.inFlight--
				r.mu.Unlock()
			}()
		}
		return rt.RoundTrip(req)
	})
}

func (r *requestCounter) reset() {
	r.mu.Lock()
	r.counts, r.order, r.peak = map[string]int{}, nil, 0
	r.mu.Unlock()
}

// sent is what each request was, in the order they were sent.
func (r *requestCounter) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

func (r *requestCounter) peakInFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

func (r *requestCounter) count() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
