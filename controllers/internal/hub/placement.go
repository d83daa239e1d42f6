package hub

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// placementEngine keeps a placement.Evaluator in step with the hub: the
// placement-policy ConfigMaps and the ManagedCluster inventory, from the
// informer cache. It runs in every hub process, leader or not, because every
// process serves the admission webhook; the writes that follow a change
// (ConfigMap status annotations, the webhook's failurePolicy, remediation) are
// the leader's, signalled through changed.
type placementEngine struct {
	evaluator *placement.Evaluator
	ready     atomic.Bool
	loaded    chan struct{} // closed once ready

	mu       sync.Mutex
	statuses []placement.Status // of the last Load
	// changed holds at most one pending event: the leader's placement
	// controller has policies or inventory to act on.
	changed chan event.GenericEvent
}

func newPlacementEngine() *placementEngine {
	return &placementEngine{evaluator: placement.New(), loaded: make(chan struct{}), changed: make(chan event.GenericEvent, 1)}
}

// placementKey is the one request of the leader's placement controller.
var placementKey = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: placement.Namespace, Name: "placement-policies"}}

// Ready reports whether policies and inventory have been loaded once.
func (e *placementEngine) Ready() bool { return e.ready.Load() }

// WaitReady waits until the engine is ready or ctx ends, and reports readiness.
func (e *placementEngine) WaitReady(ctx context.Context) bool {
	select {
	case <-e.loaded:
		return true
	case <-ctx.Done():
		return false
	}
}

// Checker is a readiness check: a hub process is not ready to answer admission
// requests before its engine has loaded policies and inventory.
func (e *placementEngine) Checker(_ *http.Request) error {
	if !e.Ready() {
		return errors.New("the placement engine is loading")
	}
	return nil
}

// signal tells the leader's controllers that policies or the inventory changed.
func (e *placementEngine) signal() {
	select {
	case e.changed <- event.GenericEvent{Object: placementKey}:
	default:
	}
}

// Statuses returns the status of every placement-policy ConfigMap as of the
// last load.
func (e *placementEngine) Statuses() []placement.Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]placement.Status(nil), e.statuses...)
}

// reloadPolicies loads every placement-policy ConfigMap from the cache.
func (e *placementEngine) reloadPolicies(ctx context.Context, c client.Reader) error {
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace(placement.Namespace)); err != nil {
		return err
	}
	var policies []corev1.ConfigMap
	for _, cm := range list.Items {
		if placement.IsPolicy(&cm) {
			policies = append(policies, cm)
		}
	}
	statuses := e.evaluator.Load(ctx, policies)
	e.mu.Lock()
	e.statuses = statuses
	e.mu.Unlock()
	e.signal()
	return nil
}

// reloadClusters replaces the inventory with every ManagedCluster in the cache.
func (e *placementEngine) reloadClusters(ctx context.Context, c client.Reader) error {
	list := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, list); err != nil {
		return err
	}
	clusters := make([]placement.Cluster, 0, len(list.Items))
	for i := range list.Items {
		clusters = append(clusters, placement.ClusterOf(&list.Items[i]))
	}
	if err := e.evaluator.SetClusters(ctx, clusters); err != nil {
		return err
	}
	e.signal()
	return nil
}

// run loads policies and inventory once the cache has synced, then follows
// their changes through informer handlers until ctx ends.
func (e *placementEngine) run(ctx context.Context, c cache.Cache) error {
	logger := log.FromContext(ctx).WithName("placement-engine")
	cmInformer, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return err
	}
	mcInformer, err := c.GetInformer(ctx, &clusterv1.ManagedCluster{})
	if err != nil {
		return err
	}
	if !c.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	if err := e.reloadClusters(ctx, c); err != nil {
		return fmt.Errorf("loading the cluster inventory: %w", err)
	}
	if err := e.reloadPolicies(ctx, c); err != nil {
		return fmt.Errorf("loading placement policies: %w", err)
	}
	e.ready.Store(true)
	close(e.loaded)

	onConfigMap := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Namespace != placement.Namespace {
			return
		}
		if err := e.reloadPolicies(ctx, c); err != nil {
			logger.Error(err, "reloading placement policies")
		}
	}
	if _, err := cmInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    onConfigMap,
		UpdateFunc: func(_, obj any) { onConfigMap(obj) },
		DeleteFunc: onConfigMap,
	}); err != nil {
		return err
	}
	onCluster := func(obj any) {
		mc, ok := obj.(*clusterv1.ManagedCluster)
		if !ok {
			if tomb, isTomb := obj.(toolscache.DeletedFinalStateUnknown); isTomb {
				mc, ok = tomb.Obj.(*clusterv1.ManagedCluster)
			}
		}
		if !ok {
			return
		}
		if err := e.evaluator.PutCluster(ctx, placement.ClusterOf(mc)); err != nil {
			logger.Error(err, "updating the inventory", "cluster", mc.Name)
		}
		e.signal()
	}
	if _, err := mcInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: onCluster,
		UpdateFunc: func(oldObj, obj any) {
			o, ok1 := oldObj.(*clusterv1.ManagedCluster)
			n, ok2 := obj.(*clusterv1.ManagedCluster)
			if ok1 && ok2 && sameCluster(placement.ClusterOf(o), placement.ClusterOf(n)) {
				return
			}
			onCluster(obj)
		},
		DeleteFunc: func(obj any) {
			name := ""
			switch o := obj.(type) {
			case *clusterv1.ManagedCluster:
				name = o.Name
			case toolscache.DeletedFinalStateUnknown:
				if mc, ok := o.Obj.(*clusterv1.ManagedCluster); ok {
					name = mc.Name
				}
			}
			if name == "" {
				return
			}
			if err := e.evaluator.DeleteCluster(ctx, name); err != nil {
				logger.Error(err, "updating the inventory", "cluster", name)
			}
			e.signal()
		},
	}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func sameCluster(a, b placement.Cluster) bool {
	return a.Name == b.Name && maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Claims, b.Claims)
}

// engineRunnable runs the engine in every hub process (not leader-elected).
type engineRunnable struct {
	engine *placementEngine
	cache  cache.Cache
}

func (r engineRunnable) Start(ctx context.Context) error { return r.engine.run(ctx, r.cache) }
func (r engineRunnable) NeedLeaderElection() bool        { return false }
