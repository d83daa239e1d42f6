package templatewatch

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	depclient "github.com/stolostron/kubernetes-dependency-watches/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

var (
	cfg *rest.Config
	c   client.Client
)

func TestMain(m *testing.M) {
	os.Exit(testkit.RunWithPlane(m, "templatewatch", nil, func(_ context.Context, p *localplane.Plane) error {
		cfg, c = p.Config, p.Client
		return nil
	}))
}

// reconciled records the watchers the watcher asks to reconcile.
type reconciled struct {
	mu  sync.Mutex
	got map[depclient.ObjectIdentifier]int
}

func (r *reconciled) Reconcile(_ context.Context, watcher depclient.ObjectIdentifier) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[watcher]++
	return reconcile.Result{}, nil
}

func (r *reconciled) count(watcher depclient.ObjectIdentifier) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[watcher]
}

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// batch reads, as one query batch of watcher, the ConfigMaps names of
// namespace ns and the list of those labelled app=a.
func batch(t *testing.T, w depclient.DynamicWatcher, watcher depclient.ObjectIdentifier, ns string, names ...string) {
	t.Helper()
	if err := w.StartQueryBatch(watcher); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := w.Get(watcher, configMapGVK, ns, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.List(watcher, configMapGVK, ns, labels.SelectorFromSet(labels.Set{"app": "a"})); err != nil {
		t.Fatal(err)
	}
	if err := w.EndQueryBatch(watcher); err != nil {
		t.Fatal(err)
	}
}

// TestShardedWatcherSpreadsWatches checks that the watches a policy's batch
// starts are spread over the shards, each object watched once whoever reads
// it and from one shard whatever namespace a cluster-scoped object is read
// with; that a change of a watched object reaches every policy reading it;
// and that what is per policy (ending a batch, removal) reaches every shard.
func TestShardedWatcherSpreadsWatches(t *testing.T) {
	ctx := t.Context()
	const ns = "sharded"
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 16)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%02d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i], Labels: map[string]string{"app": "a"}}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	rec := &reconciled{got: map[depclient.ObjectIdentifier]int{}}
	w, err := newShardedWatcher(cfg, 4, rec, depclient.Options{DisableInitialReconcile: true, EnableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.Start(ctx) }()
	select {
	case <-w.Started():
	case <-time.After(time.Minute):
		t.Fatal("the sharded watcher did not start")
	}

	a := Watcher(schema.GroupVersionKind{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "ConfigurationPolicy"}, "cluster", "a")
	b := a
	b.Name = "b"
	batch(t, w, a, ns, append(names, "missing")...) // 16 objects, one missing, one list
	if got := w.GetWatchCount(); got != 18 {
		t.Fatalf("watches after a's batch: %d, want 18", got)
	}
	used := 0
	for _, shard := range w.shards {
		if shard.GetWatchCount() > 0 {
			used++
		}
	}
	if used < 3 {
		t.Errorf("18 watches in %d of 4 shards, want them spread over at least 3", used)
	}

	// b reads half of them: no new watch.
	batch(t, w, b, ns, names[:8]...)
	if got := w.GetWatchCount(); got != 18 {
		t.Fatalf("watches after b's batch of objects a watches: %d, want 18", got)
	}

	// A cluster-scoped object read with and without a namespace is one watch.
	nsGVK := corev1.SchemeGroupVersion.WithKind("Namespace")
	if err := w.StartQueryBatch(b); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"", ns, "elsewhere"} {
		if obj, err := w.Get(b, nsGVK, in, ns); err != nil || obj == nil {
			t.Fatalf("Get namespace %s (read in %q): %v, %v", ns, in, obj, err)
		}
	}
	for _, n := range names[:8] {
		if _, err := w.Get(b, configMapGVK, ns, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndQueryBatch(b); err != nil {
		t.Fatal(err)
	}
	if got := w.GetWatchCount(); got != 19 {
		t.Fatalf("watches after b read a namespace three ways: %d, want 19", got)
	}
	if watched, err := w.ListWatchedFromCache(b); err != nil || len(watched) != 9 {
		t.Fatalf("b watches %d objects (%v), want its 8 ConfigMaps and the namespace", len(watched), err)
	}

	// A change of an object both read reaches both.
	for _, n := range []string{names[0]} {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data = map[string]string{"changed": "yes"}
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 30*time.Second, "both policies reconciled for the changes", func() string {
		if rec.count(a) < 1 || rec.count(b) < 1 {
			return fmt.Sprintf("a reconciled %d times, b %d", rec.count(a), rec.count(b))
		}
		return ""
	})
	testkit.Eventually(t, 30*time.Second, "the cache follows the change", func() string {
		if cached, err := w.GetFromCache(configMapGVK, ns, names[0]); err != nil || cached.Object["data"] == nil {
			return fmt.Sprintf("the cache of %s: %v, %v", names[0], cached, err)
		}
		return ""
	})

	// a's next batch reads one object: every shard drops the rest of a's
	// watches, except those b still reads.
	batch(t, w, a, ns, names[15])
	if got := w.GetWatchCount(); got != 11 {
		t.Fatalf("watches after a read one object: %d, want 11 (b's 9, a's object and list)", got)
	}
	if err := w.RemoveWatcher(b); err != nil {
		t.Fatal(err)
	}
	if got := w.GetWatchCount(); got != 2 {
		t.Fatalf("watches after b was removed: %d, want a's 2", got)
	}
	if err := w.AddOrUpdateWatcher(a, objectID(configMapGVK, ns, names[1], nil), objectID(configMapGVK, ns, names[2], nil)); err != nil {
		t.Fatal(err)
	}
	if got := w.GetWatchCount(); got != 2 {
		t.Fatalf("watches after a's were replaced by two: %d, want 2", got)
	}
}
