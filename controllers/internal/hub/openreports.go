package hub

import (
	"context"
	"fmt"
	"time"

	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/policyreport"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// indexRootCluster: each cluster a root policy's status.status[] names (roots
// only), so that a cluster's Report reads only the roots bound to it.
const indexRootCluster = "fleetpolicy.rootCluster"

// ReportWriter keeps one OpenReports Report (openreports.io/v1alpha1, named
// policyreport.Name) in each cluster namespace, with one result per root
// policy bound to the cluster (package policyreport), so that Policy Reporter
// shows fleetpolicy's results beside Kyverno's. It runs only when the hub is
// started with --openreports and the API server serves the Report API
// (servesReports); it reads roots from the cache (indexRootCluster) and its
// own Reports (those labelled policyreport.ManagedByLabel=fleetpolicy; a
// Report of that name without the label is left alone and the reconcile
// fails, saying so), and writes a Report only when it differs from the stored
// one (policyreport.Equal), deleting it once the cluster has no result.
type ReportWriter struct {
	Client client.Client
	Clock  clock.PassiveClock
}

// Reconcile brings the Report of one cluster namespace (req.Name) in line with
// the roots bound to the cluster.
func (w *ReportWriter) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := req.Name
	roots := &policyv1.PolicyList{}
	if err := w.Client.List(ctx, roots, client.MatchingFields{indexRootCluster: cluster}); err != nil {
		return ctrl.Result{}, err
	}
	list := make([]*policyv1.Policy, len(roots.Items))
	for i := range roots.Items {
		list[i] = &roots.Items[i]
	}
	stored := &openreportsv1alpha1.Report{}
	err := w.Client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: policyreport.Name}, stored)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil
	var previous *openreportsv1alpha1.Report
	if exists {
		previous = stored
	}
	desired := policyreport.ForCluster(cluster, list, previous, w.Clock.Now())
	switch {
	case len(desired.Results) == 0 && exists:
		return ctrl.Result{}, client.IgnoreNotFound(w.Client.Delete(ctx, stored, client.Preconditions{UID: &stored.UID}))
	case len(desired.Results) == 0:
		return ctrl.Result{}, nil
	case !exists:
		err := w.Client.Create(ctx, desired)
		if apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("Report %s/%s exists without label %s=%s: fleetpolicy does not write over a Report it did not write",
				cluster, policyreport.Name, policyreport.ManagedByLabel, policyreport.Source)
		}
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // the cluster namespace is gone
		}
		return ctrl.Result{}, err
	case policyreport.Equal(stored, desired):
		return ctrl.Result{}, nil
	}
	updated := stored.DeepCopy()
	updated.Labels[policyreport.ManagedByLabel] = policyreport.Source
	updated.Source, updated.Scope, updated.Summary, updated.Results = desired.Source, desired.Scope, desired.Summary, desired.Results
	return ctrl.Result{}, client.IgnoreNotFound(w.Client.Update(ctx, updated))
}

// reportsHandler enqueues, for a root policy's event, the clusters whose
// result may have changed (after delay, so that bursts fold into one write
// per cluster): on create or delete every cluster its status names; on update
// those whose status entry changed, or all of them when its annotations did.
func reportsHandler(delay time.Duration) handler.EventHandler {
	enqueue := func(q queue, clusters map[string]bool) {
		for cl := range clusters {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Name: cl}}, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { enqueue(q, rootClusters(e.Object, nil)) },
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) { enqueue(q, rootClusters(e.Object, nil)) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			enqueue(q, rootClusters(e.ObjectNew, e.ObjectOld))
		},
	}
}

// rootClusters are the clusters of root (a root policy) whose results differ
// from was (nil: all its clusters), those was had included.
func rootClusters(root, was client.Object) map[string]bool {
	p, ok := root.(*policyv1.Policy)
	if !ok || replication.IsReplica(p) {
		return nil
	}
	// What a cluster's result is made of, per cluster.
	type result struct {
		compliance policyv1.ComplianceState
		rollout    policyv1.RolloutStatus
	}
	entries := func(p *policyv1.Policy) map[string]result {
		out := make(map[string]result, len(p.Status.Status))
		for _, e := range p.Status.Status {
			if e != nil {
				out[e.ClusterName] = result{e.ComplianceState, e.RolloutStatus}
			}
		}
		return out
	}
	now := entries(p)
	out := map[string]bool{}
	old, _ := was.(*policyv1.Policy)
	if old == nil || !labels.Equals(old.Annotations, p.Annotations) {
		for cl := range now {
			out[cl] = true
		}
		if old == nil {
			return out
		}
	}
	before := entries(old)
	for cl, e := range now {
		if before[cl] != e {
			out[cl] = true
		}
	}
	for cl := range before {
		if _, ok := now[cl]; !ok {
			out[cl] = true
		}
	}
	return out
}

// ownReport enqueues the cluster namespace of a Report the hub writes, so
// that one edited or deleted by someone else is put back.
func ownReport(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
}

// setupReportWriter registers the ReportWriter and its index.
func setupReportWriter(ctx context.Context, mgr ctrl.Manager, opts Options, starts *controllerStarts) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &policyv1.Policy{}, indexRootCluster, func(o client.Object) []string {
		p := o.(*policyv1.Policy)
		if replication.IsReplica(p) {
			return nil
		}
		out := make([]string, 0, len(p.Status.Status))
		for _, e := range p.Status.Status {
			if e != nil && e.ClusterName != "" {
				out = append(out, e.ClusterName)
			}
		}
		return out
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Watches(&policyv1.Policy{}, reportsHandler(opts.StatusBatchDelay)).
		Watches(&openreportsv1alpha1.Report{}, handler.EnqueueRequestsFromMapFunc(ownReport))
	return starts.complete("openreports", b, logging.QuietWhenStopping(&ReportWriter{Client: mgr.GetClient(), Clock: opts.Clock}))
}

// reportsCache restricts the cache of Reports to the hub's own.
func reportsCache() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{policyreport.ManagedByLabel: policyreport.Source})}
}

// servesReports reports whether the API server serves OpenReports' Report API
// (openreports.io/v1alpha1 reports).
func servesReports(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	resources, err := dc.ServerResourcesForGroupVersion(openreportsv1alpha1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("asking the hub whether it serves the OpenReports API: %w", err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "reports" {
			return true, nil
		}
	}
	return false, nil
}
