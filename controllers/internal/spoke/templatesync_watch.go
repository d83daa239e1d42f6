package spoke

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// watcher adds watches to the template-sync controller for the kinds it meets
// while reconciling: template kinds and dependency kinds, known only at run time.
type watcher struct {
	mu        sync.Mutex
	ctrl      controller.Controller
	cache     cache.Cache
	handler   handler.EventHandler
	watched   map[schema.GroupVersionKind]bool
	templates map[schema.GroupVersionKind]bool
}

func newWatcher(c controller.Controller, cache cache.Cache, h handler.EventHandler) *watcher {
	return &watcher{
		ctrl: c, cache: cache, handler: h,
		// Policies are watched by the controller's own typed watch.
		watched:   map[schema.GroupVersionKind]bool{policyv1.GroupVersion.WithKind("Policy"): true},
		templates: map[schema.GroupVersionKind]bool{},
	}
}

// ensure watches gvk unless it is watched already; template says that objects
// of the kind are templates, which template sync lists to prune.
func (w *watcher) ensure(gvk schema.GroupVersionKind, template bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.watched[gvk] {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := w.ctrl.Watch(source.Kind(w.cache, client.Object(u), w.handler)); err != nil {
			return err
		}
		w.watched[gvk] = true
	}
	if template && !w.templates[gvk] {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := w.cache.IndexField(context.Background(), u, indexTemplatePolicy, templatePolicy); err != nil {
			return err
		}
		w.templates[gvk] = true
	}
	return nil
}

// indexTemplatePolicy indexes the templates by the policy their label
// names, so that pruning one policy's templates reads only those: a label
// selector over the cache reads every template's labels (with 500 policies
// that was a fifth of the spoke's CPU in BenchmarkSpokeTemplateSync).
const indexTemplatePolicy = "metadata.labels." + replication.LabelPolicy

func templatePolicy(obj client.Object) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	if name, _, _ := unstructured.NestedString(u.Object, "metadata", "labels", replication.LabelPolicy); name != "" {
		return []string{name}
	}
	return nil
}

// templateKinds returns the template kinds seen so far, sorted.
func (w *watcher) templateKinds() []schema.GroupVersionKind {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]schema.GroupVersionKind, 0, len(w.templates))
	for gvk := range w.templates {
		out = append(out, gvk)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return cmp.Compare(a.String(), b.String()) })
	return out
}
