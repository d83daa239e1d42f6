package templatewatch

import (
	"context"
	"errors"
	"fmt"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	depclient "github.com/stolostron/kubernetes-dependency-watches/client"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Resolver resolves templates in caching mode and watches what they read.
type Resolver struct {
	watcher  depclient.DynamicWatcher
	resolver *gotemplates.TemplateResolver
	// direct resolves templates reading the API server, watching nothing.
	direct *gotemplates.TemplateResolver
	source source.Source
	// limits bound each evaluation's templates (templates.Bound).
	limits templates.Limits
}

// New builds a Resolver reading the cluster of cfg whose resolutions stay
// within limits (unset bounds: the defaults), whose watches are started by
// up to shards evaluations at once (the controller's workers; at least one).
// Add it to the manager (it is a Runnable) and watch its Source.
func New(cfg *rest.Config, limits templates.Limits, shards int) (*Resolver, error) {
	relay, src := depclient.NewControllerRuntimeSource()
	watcher, err := newShardedWatcher(cfg, shards, relay, depclient.Options{DisableInitialReconcile: true, EnableCache: true})
	if err != nil {
		return nil, err
	}
	resolver, err := gotemplates.NewResolverWithDynamicWatcher(watcher, gotemplates.Config{SkipBatchManagement: true})
	if err != nil {
		return nil, err
	}
	direct, err := gotemplates.NewResolver(cfg, gotemplates.Config{})
	if err != nil {
		return nil, err
	}
	return &Resolver{watcher: watcher, resolver: resolver, direct: direct, source: src, limits: limits.OrDefault()}, nil
}

// ForManager builds a Resolver reading mgr's cluster and adds it to mgr.
func ForManager(mgr manager.Manager, limits templates.Limits, shards int) (*Resolver, error) {
	r, err := New(mgr.GetConfig(), limits, shards)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(r); err != nil {
		return nil, err
	}
	return r, nil
}

// Start runs the watcher until ctx ends.
func (r *Resolver) Start(ctx context.Context) error { return r.watcher.Start(ctx) }

// Source sends a reconcile request for a policy when an object its templates
// read changes.
func (r *Resolver) Source() source.Source { return r.source }

// Watcher identifies a policy to the watcher.
func Watcher(gvk schema.GroupVersionKind, namespace, name string) depclient.ObjectIdentifier {
	return depclient.ObjectIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: namespace, Name: name}
}

// Batch runs resolve as one evaluation of the policy watcher: the objects its
// templates read are watched from then on, those it no longer reads are not.
// resolve gets the resolver, bounded for the evaluation (all its resolutions
// share one deadline), and the options naming the watcher.
func (r *Resolver) Batch(ctx context.Context, watcher depclient.ObjectIdentifier, resolve func(templates.Resolver, gotemplates.ResolveOptions)) error {
	select {
	case <-r.watcher.Started():
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := r.watcher.StartQueryBatch(watcher); err != nil {
		return fmt.Errorf("starting to watch what the templates of %s read: %w", watcher, err)
	}
	bounded, cancel := context.WithTimeout(ctx, r.limits.Timeout)
	resolve(templates.Bound(bounded, r.resolver, gotemplates.Config{}, r.limits), gotemplates.ResolveOptions{Watcher: &watcher})
	cancel()
	if err := r.watcher.EndQueryBatch(watcher); err != nil {
		return fmt.Errorf("updating the watches of the templates of %s: %w", watcher, err)
	}
	return nil
}

// Direct resolves templates reading the API server and watching nothing, for
// a policy that is not evaluated by watch, within the resolver's limits
// (one deadline for the evaluation); call cancel when it is done.
func (r *Resolver) Direct(ctx context.Context) (_ templates.Resolver, cancel func()) {
	bounded, cancel := context.WithTimeout(ctx, r.limits.Timeout)
	return templates.Bound(bounded, r.direct, gotemplates.Config{}, r.limits), cancel
}

// Get reads an object for watcher during one of its batches: the object is
// watched from then on (a batch that no longer reads it drops the watch). A
// missing object is nil.
func (r *Resolver) Get(watcher depclient.ObjectIdentifier, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return r.watcher.Get(watcher, gvk, namespace, name)
}

// List lists the objects of a kind in namespace ("": every namespace, or a
// cluster-scoped kind) that selector selects (nil: all) for watcher during
// one of its batches: the list is watched from then on, as Get's object is.
func (r *Resolver) List(watcher depclient.ObjectIdentifier, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) (
	[]unstructured.Unstructured, error) {
	return r.watcher.List(watcher, gvk, namespace, selector)
}

// Forget stops watching what a deleted policy's templates read.
func (r *Resolver) Forget(watcher depclient.ObjectIdentifier) error {
	err := r.watcher.RemoveWatcher(watcher)
	if errors.Is(err, depclient.ErrNotStarted) {
		return nil
	}
	return err
}
