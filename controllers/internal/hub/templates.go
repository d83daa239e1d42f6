package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	depwatches "github.com/stolostron/kubernetes-dependency-watches/client"
	"golang.org/x/oauth2"
	"golang.org/x/sync/semaphore"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// hubTemplates resolves the hub templates of root policies per cluster with
// caching resolvers of go-template-utils over kubernetes-dependency-watches,
// one per identity: the hub's own (confined by templates.HubResolveOptions to
// the root's namespace) and one per spec.hubTemplateOptions.serviceAccountName
// (reading with a token of that ServiceAccount, requested with the TokenRequest
// API). Every replica is a watcher of the objects its templates read: a change
// to one forgets that replica's resolution and enqueues its root (changed), so
// that only the affected replicas are resolved again. Resolutions are kept per
// (root, cluster) while the root's generation, labels, annotations and
// ServiceAccount stay the same, so a root reconciled for status only resolves
// nothing.
type hubTemplates struct {
	client    client.Client // cached: the key Secrets
	apiReader client.Reader
	config    *rest.Config
	random    io.Reader
	clock     clock.PassiveClock
	// changed carries the roots to reconcile after an object a template read
	// changed, or a missing ServiceAccount appeared.
	changed chan event.GenericEvent

	ready chan struct{}   // closed when the hub's resolver runs
	ctx   context.Context // the runnable's: resolvers stop with it
	hub   *identityResolver

	watchers sync.Map // depwatches.ObjectIdentifier -> resolutionKey

	// limits bound each resolution; slots how many run at once.
	limits templates.Limits
	slots  *semaphore.Weighted

	mu          sync.Mutex
	resolutions map[types.NamespacedName]map[string]*resolution // root -> cluster -> resolution
	// stalled are the roots one of whose resolutions met its bounds: until
	// the backoff ends, their other clusters fail at once instead of each
	// taking a worker for the whole deadline.
	stalled map[types.NamespacedName]*stall
	// proven is, per root, the fingerprint at which one of its resolutions
	// succeeded; until then its resolutions take probes[root] first.
	proven   map[types.NamespacedName]string
	probes   map[types.NamespacedName]*semaphore.Weighted
	accounts map[types.NamespacedName]*identityResolver // ServiceAccount -> its resolver
}

// resolutionKey names one replica's resolution.
type resolutionKey struct {
	root    types.NamespacedName
	cluster string // "": the root waits for its ServiceAccount
}

// resolution is a replica's last resolution: the resolved policy templates
// (nil where a template holds no hub template) and IV, or the template error
// that only a change can fix, valid while the root's inputs are (fingerprint)
// and no watched object changed; and the last error reported for it.
type resolution struct {
	fingerprint string
	identity    types.NamespacedName // the ServiceAccount it read as; empty: the hub
	templates   [][]byte
	iv          string
	err         error
	valid       bool
	lastError   string
}

// identityResolver is a caching resolver reading with one identity.
type identityResolver struct {
	watcher  depwatches.DynamicWatcher
	resolver *gotemplates.TemplateResolver
	cancel   context.CancelFunc
	stopped  atomic.Bool
}

// stalledError is a cluster's resolution not tried because the root's
// templates met their bounds for another cluster, until a backoff ends. Its
// message stays the same while the backoff runs, and it gets no Event of its
// own (the cluster that met the bound has one).
type stalledError struct{ err error }

func (e stalledError) Error() string {
	return "not resolved until a backoff ends, as the templates met their bounds for another cluster: " + e.err.Error()
}
func (e stalledError) Unwrap() error { return e.err }

// stall is a root whose hub templates met their bounds: resolutions fail
// with err until until, and failures counts the stalls in a row.
type stall struct {
	until    time.Time
	failures int
	err      error
}

// errServiceAccountMissing marks a hubTemplateOptions.serviceAccountName that
// does not exist (the hub watches it and resolves again when it appears).
var errServiceAccountMissing = errors.New("the service account does not exist")

func newHubTemplates(c client.Client, apiReader client.Reader, config *rest.Config, random io.Reader, clk clock.PassiveClock) *hubTemplates {
	return &hubTemplates{
		client: c, apiReader: apiReader, config: config, random: random, clock: clk,
		changed:     make(chan event.GenericEvent, 1024),
		ready:       make(chan struct{}),
		resolutions: map[types.NamespacedName]map[string]*resolution{},
		accounts:    map[types.NamespacedName]*identityResolver{},
		stalled:     map[types.NamespacedName]*stall{},
		proven:      map[types.NamespacedName]string{},
		probes:      map[types.NamespacedName]*semaphore.Weighted{},
		limits:      templates.Limits{}.OrDefault(),
		slots:       semaphore.NewWeighted(16),
	}
}

// Start runs the hub's own resolver until ctx ends (a manager Runnable).
func (h *hubTemplates) Start(ctx context.Context) error {
	h.ctx = ctx
	hub, err := h.startResolver(ctx, h.config)
	if err != nil {
		return fmt.Errorf("starting the hub template resolver: %w", err)
	}
	h.hub = hub
	close(h.ready)
	<-ctx.Done()
	return nil
}

// startResolver starts a dependency watcher reading with config and a caching
// resolver over it; the watcher stops when ctx ends or cancel is called.
func (h *hubTemplates) startResolver(ctx context.Context, config *rest.Config) (*identityResolver, error) {
	ctx, cancel := context.WithCancel(ctx)
	watcher, err := depwatches.New(config, h, &depwatches.Options{DisableInitialReconcile: true, EnableCache: true})
	if err != nil {
		cancel()
		return nil, err
	}
	ir := &identityResolver{watcher: watcher, cancel: cancel}
	go func() {
		if err := watcher.Start(ctx); err != nil {
			log.FromContext(ctx).Error(err, "a hub template dependency watcher stopped")
		}
		ir.stopped.Store(true)
		cancel()
	}()
	select {
	case <-watcher.Started():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// As OCM's propagator: its own query batches, 8 more spaces for autoindent.
	resolverConfig := templates.HubResolverConfig()
	resolverConfig.SkipBatchManagement = true // one query batch per replica, around all its templates
	ir.resolver, err = gotemplates.NewResolverWithDynamicWatcher(watcher, resolverConfig)
	if err != nil {
		cancel()
		return nil, err
	}
	return ir, nil
}

// Reconcile is called by a dependency watcher when an object a watcher (a
// replica, or a root waiting for its ServiceAccount) read changed: the
// replica's resolution is forgotten and its root enqueued.
func (h *hubTemplates) Reconcile(_ context.Context, watcher depwatches.ObjectIdentifier) (reconcile.Result, error) {
	v, ok := h.watchers.Load(watcher)
	if !ok {
		return reconcile.Result{}, nil
	}
	key := v.(resolutionKey)
	h.mu.Lock()
	if r := h.resolutions[key.root][key.cluster]; r != nil {
		r.valid = false
	}
	h.mu.Unlock()
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: key.root.Namespace, Name: key.root.Name}}
	h.changed <- event.GenericEvent{Object: root}
	return reconcile.Result{}, nil
}

// replicaWatcher is the watcher identity of root's replica for cluster.
func replicaWatcher(root types.NamespacedName, cluster string) depwatches.ObjectIdentifier {
	return depwatches.ObjectIdentifier{Group: policyv1.GroupVersion.Group, Version: policyv1.GroupVersion.Version,
		Kind: "Policy", Namespace: cluster, Name: replication.Name(root.Namespace, root.Name)}
}

// accountWatcher is the watcher identity of a root waiting for its
// ServiceAccount to exist.
func accountWatcher(root types.NamespacedName) depwatches.ObjectIdentifier {
	return depwatches.ObjectIdentifier{Group: "fleetpolicy.io", Version: "v1", Kind: "HubTemplateServiceAccountWait",
		Namespace: root.Namespace, Name: root.Name}
}

// fingerprint is what a replica's resolution depends on besides the objects
// its templates read (which the watches follow): the root's spec (its
// generation), labels and annotations (.PolicyMetadata, trigger-update) and
// ServiceAccount.
func fingerprint(root *policyv1.Policy) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(root.Labels) // strings only: cannot fail
	_ = enc.Encode(root.Annotations)
	fmt.Fprintf(h, "%d\n%s", root.Generation, templates.ServiceAccount(root))
	return hex.EncodeToString(h.Sum(nil))
}

// resolve resolves, in place, the hub templates of replica (root's, for
// cluster); previousIV is the IV of the replica last written. It returns a
// *templates.HubTemplateError, or an error naming the ServiceAccount, and then
// leaves replica as it was.
func (h *hubTemplates) resolve(ctx context.Context, root *policyv1.Policy, replica *policyv1.Policy, previousIV string) error {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	rootKey := client.ObjectKeyFromObject(root)
	cluster := replica.Namespace
	fp := fingerprint(root)
	h.mu.Lock()
	r := h.resolutions[rootKey][cluster]
	if r != nil && r.valid && r.fingerprint == fp && h.watching(r.identity) {
		defer h.mu.Unlock()
		if r.err != nil {
			return r.err
		}
		apply(replica, r.templates, r.iv)
		return nil
	}
	if err := h.stalledLocked(rootKey); err != nil {
		h.mu.Unlock()
		return err
	}
	h.mu.Unlock()

	identity, ir, err := h.resolverFor(ctx, root)
	if err != nil {
		return err
	}
	watcher := replicaWatcher(rootKey, cluster)
	key := resolutionKey{root: rootKey, cluster: cluster}
	h.watchers.Store(watcher, key)
	h.mu.Lock()
	if r != nil && r.identity != identity {
		// The replica was read as another identity: drop its watches there.
		h.uncache(r.identity, watcher)
	}
	h.mu.Unlock()

	release, err := h.acquire(ctx, rootKey, fp)
	if err != nil {
		return err
	}
	if err := ir.resolver.StartQueryBatch(watcher); err != nil {
		release()
		return err
	}
	options := templates.HubResolveOptions(root, cluster)
	options.Watcher = &watcher
	resolved := replica.DeepCopy()
	bounded, cancel := context.WithTimeout(ctx, h.limits.Timeout)
	err = templates.ResolveHubTemplates(ir.resolver, resolved, templates.HubInputs{
		Root: root, Cluster: cluster, ClusterLabelsFromAPI: true, Options: options,
		Key: func() ([]byte, error) { return h.key(ctx, cluster) }, PreviousIV: previousIV, Random: h.random,
		Context: bounded, Limits: h.limits,
	})
	cancel()
	if endErr := ir.resolver.EndQueryBatch(watcher); endErr != nil && err == nil {
		err = endErr
	}
	if err == nil {
		h.mu.Lock()
		h.proven[rootKey] = fp
		h.mu.Unlock()
	}
	release()

	hubTemplateResolutions.WithLabelValues(outcome(err)).Inc()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resolutions[rootKey] == nil {
		h.resolutions[rootKey] = map[string]*resolution{}
	}
	if r == nil {
		r = &resolution{}
		h.resolutions[rootKey][cluster] = r
	}
	if r.identity != identity {
		previous := r.identity
		r.identity = identity
		if previous.Name != "" {
			h.stopUnusedAccounts()
		}
	}
	if templates.IsBoundError(err) {
		// Tried again after a backoff that grows while it keeps failing.
		st := h.stalled[rootKey]
		if st == nil {
			st = &stall{}
			h.stalled[rootKey] = st
		}
		if now := h.clock.Now(); !now.Before(st.until) { // resolutions in flight together count once
			st.until, st.err = now.Add(templates.RetryAfter(st.failures)), err
			st.failures++
		}
	} else if err == nil {
		delete(h.stalled, rootKey)
	}
	if err != nil {
		// An error a watched change or a root change must fix is kept, so
		// that reconciles for status do not resolve it again; any other is
		// tried again next time.
		r.fingerprint, r.err = fp, err
		r.valid = isTemplateError(err) && !retryable(err)
		return err
	}
	r.fingerprint, r.valid, r.lastError, r.err = fp, true, "", nil
	r.templates = make([][]byte, len(resolved.Spec.PolicyTemplates))
	for i, t := range resolved.Spec.PolicyTemplates {
		if t != nil && (i >= len(replica.Spec.PolicyTemplates) || string(t.ObjectDefinition.Raw) != string(replica.Spec.PolicyTemplates[i].ObjectDefinition.Raw)) {
			r.templates[i] = t.ObjectDefinition.Raw
		}
	}
	r.iv = resolved.Annotations[templates.IVAnnotation]
	apply(replica, r.templates, r.iv)
	return nil
}

// acquire takes a hub-wide resolution slot for a resolution of root's
// templates (at fingerprint fp), and returns what releases it. Until one of
// the root's resolutions at fp succeeded, its resolutions run one at a time
// (a probe): a root whose templates meet their bounds then holds one slot for
// the deadline, not one per writer, before the stall stops the rest.
func (h *hubTemplates) acquire(ctx context.Context, root types.NamespacedName, fp string) (release func(), err error) {
	h.mu.Lock()
	var probe *semaphore.Weighted
	if h.proven[root] != fp {
		probe = h.probes[root]
		if probe == nil {
			probe = semaphore.NewWeighted(1)
			h.probes[root] = probe
		}
	}
	h.mu.Unlock()
	if probe != nil {
		if err := probe.Acquire(ctx, 1); err != nil {
			return nil, err
		}
		h.mu.Lock()
		proven := h.proven[root] == fp
		h.mu.Unlock()
		if proven {
			probe.Release(1)
			probe = nil
		}
	}
	releaseProbe := func() {
		if probe != nil {
			probe.Release(1)
		}
	}
	if err := h.slots.Acquire(ctx, 1); err != nil {
		releaseProbe()
		return nil, err
	}
	h.mu.Lock()
	err = h.stalledLocked(root) // another cluster may have met the bounds while this one waited
	h.mu.Unlock()
	if err != nil {
		h.slots.Release(1)
		releaseProbe()
		return nil, err
	}
	return func() { h.slots.Release(1); releaseProbe() }, nil
}

// stalledLocked is the error of a root whose templates met their bounds
// until its backoff ends, nil otherwise. h.mu is held.
func (h *hubTemplates) stalledLocked(root types.NamespacedName) error {
	if st := h.stalled[root]; st != nil && h.clock.Now().Before(st.until) {
		return stalledError{err: st.err}
	}
	return nil
}

// apply sets resolved policy templates and the IV annotation on a replica.
func apply(replica *policyv1.Policy, resolved [][]byte, iv string) {
	for i, raw := range resolved {
		if raw != nil && i < len(replica.Spec.PolicyTemplates) && replica.Spec.PolicyTemplates[i] != nil {
			replica.Spec.PolicyTemplates[i].ObjectDefinition.Raw = raw
			replica.Spec.PolicyTemplates[i].ObjectDefinition.Object = nil
		}
	}
	if iv != "" {
		if replica.Annotations == nil {
			replica.Annotations = map[string]string{}
		}
		replica.Annotations[templates.IVAnnotation] = iv
	}
}

// reportError records err as the last error of root's replica for cluster and
// reports whether it differs from the one recorded before (so that an Event is
// emitted once per new error, not per reconcile).
func (h *hubTemplates) reportError(root types.NamespacedName, cluster string, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resolutions[root] == nil {
		h.resolutions[root] = map[string]*resolution{}
	}
	r := h.resolutions[root][cluster]
	if r == nil {
		r = &resolution{}
		h.resolutions[root][cluster] = r
	}
	if r.lastError == err.Error() {
		return false
	}
	r.lastError = err.Error()
	return true
}

// resolverFor returns the resolver of root's identity: the hub's, or its
// ServiceAccount's (started on first use). A missing ServiceAccount is
// watched (the root is enqueued when it appears) and reported as
// errServiceAccountMissing. A resolver whose dependency watcher stopped is
// started again, and the resolutions made with it are made again (their
// watches went with it).
func (h *hubTemplates) resolverFor(ctx context.Context, root *policyv1.Policy) (types.NamespacedName, *identityResolver, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hub.stopped.Load() {
		hub, err := h.startResolver(h.ctx, h.config)
		if err != nil {
			return types.NamespacedName{}, nil, fmt.Errorf("starting the hub template resolver again: %w", err)
		}
		h.hub = hub
		h.invalidate(types.NamespacedName{})
	}
	name := templates.ServiceAccount(root)
	if name == "" {
		return types.NamespacedName{}, h.hub, nil
	}
	sa := types.NamespacedName{Namespace: root.Namespace, Name: name}
	rootKey := client.ObjectKeyFromObject(root)
	wait := accountWatcher(rootKey)
	if ir := h.accounts[sa]; ir != nil && !ir.stopped.Load() {
		return sa, ir, nil
	} else if ir != nil {
		h.invalidate(sa)
	}
	ir, err := h.startAccountResolver(sa)
	if err != nil {
		if apierrors.IsNotFound(err) {
			h.watchers.Store(wait, resolutionKey{root: rootKey})
			if werr := h.hub.watcher.AddOrUpdateWatcher(wait, depwatches.ObjectIdentifier{
				Version: "v1", Kind: "ServiceAccount", Namespace: sa.Namespace, Name: sa.Name}); werr != nil {
				log.FromContext(ctx).Error(werr, "watching a missing hub templates service account", "serviceAccount", sa)
			}
			return sa, nil, fmt.Errorf("the service account in hubTemplateOptions.serviceAccountName (%s) does not exist: %w", sa, errServiceAccountMissing)
		}
		return sa, nil, fmt.Errorf("setting up the template resolver for the service account in hubTemplateOptions.serviceAccountName (%s): %w", sa, err)
	}
	h.accounts[sa] = ir
	if _, waited := h.watchers.LoadAndDelete(wait); waited {
		_ = h.hub.watcher.RemoveWatcher(wait)
	}
	return sa, ir, nil
}

// watching reports whether the resolver of identity still runs (and so the
// watches of its resolutions). h.mu is held.
func (h *hubTemplates) watching(identity types.NamespacedName) bool {
	ir := h.hub
	if identity.Name != "" {
		ir = h.accounts[identity]
	}
	return ir != nil && !ir.stopped.Load()
}

// invalidate makes every resolution read as identity be made again. h.mu is
// held.
func (h *hubTemplates) invalidate(identity types.NamespacedName) {
	for _, clusters := range h.resolutions {
		for _, r := range clusters {
			if r.identity == identity {
				r.valid = false
			}
		}
	}
}

// startAccountResolver starts a resolver reading as sa: the hub's server and
// TLS settings, no credentials of the hub's, and a bearer token of sa from the
// TokenRequest API, requested again before it expires. The first request
// tells whether sa exists.
func (h *hubTemplates) startAccountResolver(sa types.NamespacedName) (*identityResolver, error) {
	tokens := oauth2.ReuseTokenSource(nil, &accountTokens{ctx: h.ctx, client: h.client, account: sa})
	if _, err := tokens.Token(); err != nil {
		return nil, err
	}
	config := &rest.Config{
		Host: h.config.Host, APIPath: h.config.APIPath,
		TLSClientConfig: rest.TLSClientConfig{CAFile: h.config.CAFile, CAData: h.config.CAData,
			ServerName: h.config.ServerName, Insecure: h.config.Insecure},
		QPS: h.config.QPS, Burst: h.config.Burst, UserAgent: h.config.UserAgent,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { return transport.TokenSourceWrapTransport(tokens)(rt) },
	}
	return h.startResolver(h.ctx, config)
}

// accountTokens requests tokens of a ServiceAccount (valid two hours, used
// until ten minutes before they expire, as OCM's propagator does).
type accountTokens struct {
	ctx     context.Context
	client  client.Client
	account types.NamespacedName
}

func (a *accountTokens) Token() (*oauth2.Token, error) {
	seconds := int64(7200)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: a.account.Namespace, Name: a.account.Name}}
	if err := a.client.SubResource("token").Create(a.ctx, sa, req); err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: req.Status.Token, TokenType: "Bearer",
		Expiry: req.Status.ExpirationTimestamp.Add(-10 * time.Minute)}, nil
}

// uncache drops a watcher's watches from identity's resolver. h.mu is held.
func (h *hubTemplates) uncache(identity types.NamespacedName, watcher depwatches.ObjectIdentifier) {
	ir := h.hub
	if identity.Name != "" {
		ir = h.accounts[identity]
	}
	if ir != nil && ir.resolver != nil && !ir.stopped.Load() {
		_ = ir.resolver.UncacheWatcher(watcher)
	}
}

// forget drops root's resolutions (and their watches) for the clusters not in
// keep (all when keep is nil), and stops the ServiceAccount resolvers no
// root uses any more.
func (h *hubTemplates) forget(root types.NamespacedName, keep map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	removed := false
	for cluster, r := range h.resolutions[root] {
		if keep[cluster] {
			continue
		}
		watcher := replicaWatcher(root, cluster)
		h.uncache(r.identity, watcher)
		h.watchers.Delete(watcher)
		delete(h.resolutions[root], cluster)
		removed = removed || r.identity.Name != ""
	}
	if keep == nil {
		delete(h.stalled, root)
		delete(h.proven, root)
		delete(h.probes, root)
		if _, waited := h.watchers.LoadAndDelete(accountWatcher(root)); waited && h.hub != nil {
			_ = h.hub.watcher.RemoveWatcher(accountWatcher(root))
		}
	}
	if len(h.resolutions[root]) == 0 {
		delete(h.resolutions, root)
	}
	if removed {
		h.stopUnusedAccounts()
	}
}

// stopUnusedAccounts stops the ServiceAccount resolvers no resolution uses.
// h.mu is held.
func (h *hubTemplates) stopUnusedAccounts() {
	used := map[types.NamespacedName]bool{}
	for _, clusters := range h.resolutions {
		for _, r := range clusters {
			used[r.identity] = true
		}
	}
	for sa, ir := range h.accounts {
		if !used[sa] {
			ir.cancel()
			delete(h.accounts, sa)
		}
	}
}

// key returns cluster's encryption key from the policy-encryption-key Secret
// in its namespace, creating the Secret with a new key when it is missing.
func (h *hubTemplates) key(ctx context.Context, cluster string) ([]byte, error) {
	secret := &corev1.Secret{}
	name := types.NamespacedName{Namespace: cluster, Name: templates.EncryptionKeySecret}
	err := h.client.Get(ctx, name, secret)
	if apierrors.IsNotFound(err) {
		secret, err = templates.NewKeySecret(cluster, h.clock.Now(), h.random)
		if err != nil {
			return nil, err
		}
		err = h.client.Create(ctx, secret)
		if apierrors.IsAlreadyExists(err) {
			secret = &corev1.Secret{}
			err = h.apiReader.Get(ctx, name, secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the Secret %s: %w", name, err)
	}
	return templates.Key(secret)
}

// retryable reports whether a template error may go away without any change
// the hub is told of: the API server failing, or a permission a ServiceAccount
// lacks (RBAC changes are not watched, as in OCM).
func retryable(err error) bool {
	return templates.IsBoundError(err) || errors.Is(err, gotemplates.ErrMissingAPIResource) || errors.Is(err, depwatches.ErrWatchStopping) ||
		apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		(!errors.Is(err, errServiceAccountMissing) && !isTemplateError(err))
}

func isTemplateError(err error) bool {
	var t *templates.HubTemplateError
	return errors.As(err, &t)
}

// templateRetryDelay is when a root whose hub templates failed for a
// retryable reason is reconciled again.
const templateRetryDelay = 15 * time.Second
