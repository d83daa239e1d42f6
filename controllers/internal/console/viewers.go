package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// identity is who a request reads as: the kubeconfig's own identity on a
// workstation, or the viewer's bearer token. key tells identities apart
// without keeping the token in the clear.
type identity struct {
	key string
	cfg *rest.Config
}

func tokenIdentity(base *rest.Config, token string) identity {
	cfg := rest.AnonymousClientConfig(base)
	cfg.BearerToken = token
	sum := sha256.Sum256([]byte(token))
	return identity{key: "token:" + hex.EncodeToString(sum[:]), cfg: cfg}
}

// viewer is what the console keeps for one identity: a direct client (its
// REST mapper discovered once) and informer caches of root Policies and
// PolicySets, one per namespace scope ("" for every namespace).
type viewer struct {
	id       identity
	client   client.Client
	lastUsed time.Time
	scopes   map[string]*scope
}

// scope is one informer cache of a viewer.
type scope struct {
	cache    cache.Cache
	cancel   context.CancelFunc
	ready    chan struct{} // closed once synced or failed
	err      error
	checked  time.Time // last time the viewer's right to list was confirmed
	lastUsed time.Time
}

// viewers are the bounded, expiring set of viewers' caches.
type viewers struct {
	base     *rest.Config
	scheme   *runtime.Scheme
	max      int           // identities kept
	scopes   int           // scopes kept per identity
	idle     time.Duration // an identity unused that long is dropped
	recheck  time.Duration // how old a confirmation of the right to list may be
	syncWait time.Duration
	now      func() time.Time

	mu      sync.Mutex
	entries map[string]*viewer
}

// rootSelector selects root policies: replicas carry the root-policy label.
func rootSelector() labels.Selector {
	req, err := labels.NewRequirement(replication.LabelRootPolicy, selection.DoesNotExist, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*req)
}

// viewer returns the viewer of id, creating its client on first use and
// dropping the least recently used viewer beyond the bound.
func (v *viewers) viewer(id identity) (*viewer, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	if e := v.entries[id.key]; e != nil {
		e.lastUsed = now
		return e, nil
	}
	c, err := client.New(id.cfg, client.Options{Scheme: v.scheme})
	if err != nil {
		return nil, err
	}
	if len(v.entries) >= v.max {
		var oldest *viewer
		for _, e := range v.entries {
			if oldest == nil || e.lastUsed.Before(oldest.lastUsed) {
				oldest = e
			}
		}
		v.dropLocked(oldest)
	}
	e := &viewer{id: id, client: c, lastUsed: now, scopes: map[string]*scope{}}
	v.entries[id.key] = e
	return e, nil
}

func (v *viewers) dropLocked(e *viewer) {
	for _, s := range e.scopes {
		s.cancel()
	}
	delete(v.entries, e.id.key)
}

// sweep drops the viewers and scopes unused for longer than idle.
func (v *viewers) sweep() {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	for _, e := range v.entries {
		if now.Sub(e.lastUsed) > v.idle {
			v.dropLocked(e)
			continue
		}
		for ns, s := range e.scopes {
			if now.Sub(s.lastUsed) > v.idle {
				s.cancel()
				delete(e.scopes, ns)
			}
		}
	}
}

// stopAll stops every cache.
func (v *viewers) stopAll() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.entries {
		v.dropLocked(e)
	}
}

// canList asks the API server, as the viewer, for one root Policy and one
// PolicySet of the scope: an error (Forbidden, Unauthorized) means the viewer
// may not read what the cache would serve.
func canList(ctx context.Context, c client.Client, namespace string) error {
	opts := []client.ListOption{client.Limit(1), client.MatchingLabelsSelector{Selector: rootSelector()}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, &policyv1.PolicyList{}, opts...); err != nil {
		return err
	}
	setOpts := []client.ListOption{client.Limit(1)}
	if namespace != "" {
		setOpts = append(setOpts, client.InNamespace(namespace))
	}
	return c.List(ctx, &policyv1beta1.PolicySetList{}, setOpts...)
}

// roots returns a reader of the root Policies and PolicySets of namespace
// ("" for all) as e may read them: an informer cache the viewer's identity
// fills, started on first use after the API server said the viewer may list
// there, and confirmed again when that answer is older than recheck (a
// revoked right then drops the cache).
func (v *viewers) roots(ctx context.Context, e *viewer, namespace string) (client.Reader, error) {
	v.mu.Lock()
	now := v.now()
	s := e.scopes[namespace]
	if s != nil {
		s.lastUsed = now
		v.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if s.err != nil {
			return nil, s.err
		}
		v.mu.Lock()
		stale := now.Sub(s.checked) > v.recheck
		v.mu.Unlock()
		if stale {
			if err := canList(ctx, e.client, namespace); err != nil {
				v.mu.Lock()
				if e.scopes[namespace] == s {
					s.cancel()
					delete(e.scopes, namespace)
				}
				v.mu.Unlock()
				return nil, err
			}
			v.mu.Lock()
			s.checked = now
			v.mu.Unlock()
		}
		return s.cache, nil
	}
	if len(e.scopes) >= v.scopes {
		oldest, found := "", false
		for ns, o := range e.scopes {
			if !found || o.lastUsed.Before(e.scopes[oldest].lastUsed) {
				oldest, found = ns, true
			}
		}
		e.scopes[oldest].cancel()
		delete(e.scopes, oldest)
	}
	cctx, cancel := context.WithCancel(context.Background())
	s = &scope{cancel: cancel, ready: make(chan struct{}), checked: now, lastUsed: now}
	e.scopes[namespace] = s
	v.mu.Unlock()

	s.err = v.start(ctx, cctx, e, s, namespace)
	if s.err != nil {
		cancel()
		v.mu.Lock()
		if e.scopes[namespace] == s {
			delete(e.scopes, namespace)
		}
		v.mu.Unlock()
	}
	close(s.ready)
	if s.err != nil {
		return nil, s.err
	}
	return s.cache, nil
}

func (v *viewers) start(ctx, cctx context.Context, e *viewer, s *scope, namespace string) error {
	if err := canList(ctx, e.client, namespace); err != nil {
		return err
	}
	opts := cache.Options{
		Scheme:                      v.scheme,
		DefaultTransform:            cache.TransformStripManagedFields(),
		ReaderFailOnMissingInformer: true,
		ByObject:                    map[client.Object]cache.ByObject{&policyv1.Policy{}: {Label: rootSelector()}},
	}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	c, err := cache.New(e.id.cfg, opts)
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{&policyv1.Policy{}, &policyv1beta1.PolicySet{}} {
		if _, err := c.GetInformer(cctx, obj); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(cctx) }()
	wait, cancel := context.WithTimeout(ctx, v.syncWait)
	defer cancel()
	if !c.WaitForCacheSync(wait) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the policies of %s did not load within %s", scopeName(namespace), v.syncWait)
	}
	s.cache = c
	return nil
}

func scopeName(namespace string) string {
	if namespace == "" {
		return "every namespace"
	}
	return "namespace " + namespace
}
