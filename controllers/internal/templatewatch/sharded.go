package templatewatch

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	depclient "github.com/stolostron/kubernetes-dependency-watches/client"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// shardedWatcher is one depclient.DynamicWatcher made of several, each
// watching its own share of the watched objects: an object (or list query)
// always goes to the same shard, chosen by its identity, so that it is
// watched and cached once whichever policies read it.
//
// Why: a DynamicWatcher holds its write lock across the List and Watch
// requests that start the watch of an object read for the first time, so
// every evaluation reading a new object waits for every other's requests.
// Shards start watches side by side, one per shard at a time. What is per
// watcher (a policy's query batch, its removal) goes to every shard; what
// is per watched object goes to its shard.
type shardedWatcher struct {
	shards  []depclient.DynamicWatcher
	started chan struct{}
}

var _ depclient.DynamicWatcher = (*shardedWatcher)(nil)

// newShardedWatcher builds n watchers (at least one) of the cluster of cfg
// reporting to reconciler. Their requests share one client-side rate limit,
// cfg's (client-go's defaults when it sets none), so that the shards
// together ask the API server no more than one watcher would.
func newShardedWatcher(cfg *rest.Config, n int, reconciler depclient.Reconciler, opts depclient.Options) (*shardedWatcher, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS >= 0 { // a negative QPS: no limit
		qps, burst := cfg.QPS, cfg.Burst
		if qps == 0 {
			qps = rest.DefaultQPS
		}
		if burst == 0 {
			burst = rest.DefaultBurst
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	}
	s := &shardedWatcher{shards: make([]depclient.DynamicWatcher, max(1, n)), started: make(chan struct{})}
	for i := range s.shards {
		shardOpts := opts
		w, err := depclient.New(cfg, reconciler, &shardOpts)
		if err != nil {
			return nil, err
		}
		s.shards[i] = w
	}
	return s, nil
}

// shardOf is the shard that watches id. A cluster-scoped kind's objects are
// placed without their namespace, as the watcher itself ignores it.
func (s *shardedWatcher) shardOf(id depclient.ObjectIdentifier) depclient.DynamicWatcher {
	if len(s.shards) == 1 {
		return s.shards[0]
	}
	if id.Namespace != "" {
		if gvr, err := s.shards[0].GVKToGVR(id.GroupVersionKind()); err == nil && !gvr.Namespaced {
			id.Namespace = ""
		}
	}
	h := fnv.New64a()
	for _, part := range []string{id.Group, id.Version, id.Kind, id.Namespace, id.Name, id.Selector} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return s.shards[h.Sum64()%uint64(len(s.shards))]
}

// objectID identifies the object, or with a selector the list, as the watcher
// does.
func objectID(gvk schema.GroupVersionKind, namespace, name string, selector labels.Selector) depclient.ObjectIdentifier {
	id := depclient.ObjectIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: namespace, Name: name}
	if selector != nil {
		id.Selector = selector.String()
	}
	return id
}

// Start runs every shard until ctx ends; Started is closed once all have
// started.
func (s *shardedWatcher) Start(ctx context.Context) error {
	errs := make([]error, len(s.shards))
	var wg sync.WaitGroup
	for i, shard := range s.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = shard.Start(ctx)
		}()
	}
	go func() {
		for _, shard := range s.shards {
			select {
			case <-shard.Started():
			case <-ctx.Done():
				return
			}
		}
		close(s.started)
	}()
	wg.Wait()
	return errors.Join(errs...)
}

func (s *shardedWatcher) Started() <-chan struct{} { return s.started }

// StartQueryBatch starts watcher's batch on every shard. When one refuses,
// those already started are ended again, so that none is left in progress;
// having read nothing, they drop watcher's watches, which its next
// evaluation starts again.
func (s *shardedWatcher) StartQueryBatch(watcher depclient.ObjectIdentifier) error {
	for i, shard := range s.shards {
		if err := shard.StartQueryBatch(watcher); err != nil {
			for _, begun := range s.shards[:i] {
				_ = begun.EndQueryBatch(watcher)
			}
			return err
		}
	}
	return nil
}

// onEvery calls do with every shard and joins their errors.
func (s *shardedWatcher) onEvery(do func(depclient.DynamicWatcher) error) error {
	errs := make([]error, len(s.shards))
	for i, shard := range s.shards {
		errs[i] = do(shard)
	}
	return errors.Join(errs...)
}

// EndQueryBatch ends watcher's batch on every shard, each dropping the
// watches the batch no longer read.
func (s *shardedWatcher) EndQueryBatch(watcher depclient.ObjectIdentifier) error {
	return s.onEvery(func(shard depclient.DynamicWatcher) error { return shard.EndQueryBatch(watcher) })
}

func (s *shardedWatcher) RemoveWatcher(watcher depclient.ObjectIdentifier) error {
	return s.onEvery(func(shard depclient.DynamicWatcher) error { return shard.RemoveWatcher(watcher) })
}

func (s *shardedWatcher) AddWatcher(watcher, watched depclient.ObjectIdentifier) error {
	return s.shardOf(watched).AddWatcher(watcher, watched)
}

// AddOrUpdateWatcher makes watched all that watcher watches: each shard gets
// its share, and a shard with none drops the watcher's watches.
func (s *shardedWatcher) AddOrUpdateWatcher(watcher depclient.ObjectIdentifier, watched ...depclient.ObjectIdentifier) error {
	if len(watched) == 0 {
		return fmt.Errorf("%w: at least one watched object must be provided", depclient.ErrInvalidInput)
	}
	shares := make(map[depclient.DynamicWatcher][]depclient.ObjectIdentifier, len(s.shards))
	for _, id := range watched {
		shard := s.shardOf(id)
		shares[shard] = append(shares[shard], id)
	}
	return s.onEvery(func(shard depclient.DynamicWatcher) error {
		if share := shares[shard]; len(share) > 0 {
			return shard.AddOrUpdateWatcher(watcher, share...)
		}
		return shard.RemoveWatcher(watcher)
	})
}

func (s *shardedWatcher) GetWatchCount() uint {
	var n uint
	for _, shard := range s.shards {
		n += shard.GetWatchCount()
	}
	return n
}

func (s *shardedWatcher) Get(watcher depclient.ObjectIdentifier, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return s.shardOf(objectID(gvk, namespace, name, nil)).Get(watcher, gvk, namespace, name)
}

func (s *shardedWatcher) GetFromCache(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return s.shardOf(objectID(gvk, namespace, name, nil)).GetFromCache(gvk, namespace, name)
}

func (s *shardedWatcher) List(watcher depclient.ObjectIdentifier, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	return s.shardOf(objectID(gvk, namespace, "", selectorOrAll(selector))).List(watcher, gvk, namespace, selector)
}

func (s *shardedWatcher) ListFromCache(gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	return s.shardOf(objectID(gvk, namespace, "", selectorOrAll(selector))).ListFromCache(gvk, namespace, selector)
}

// ListWatchedFromCache returns what watcher watches, from every shard.
func (s *shardedWatcher) ListWatchedFromCache(watcher depclient.ObjectIdentifier) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, shard := range s.shards {
		objs, err := shard.ListWatchedFromCache(watcher)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func (s *shardedWatcher) GVKToGVR(gvk schema.GroupVersionKind) (depclient.ScopedGVR, error) {
	return s.shards[0].GVKToGVR(gvk)
}

// selectorOrAll is selector, or the selector of everything (the watcher
// identifies a list by its selector's text, "" for everything).
func selectorOrAll(selector labels.Selector) labels.Selector {
	if selector == nil {
		return labels.Everything()
	}
	return selector
}
