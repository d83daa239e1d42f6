package spoke

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// policyRefOf is the dependency target a policy in the cluster namespace is:
// its name is already the replicated name.
func policyRefOf(name string) dependency.Ref {
	return dependency.ObjectRef(policyv1.GroupVersion.String(), "Policy", "", name)
}

// policyHandler enqueues a policy for changes of its own other than to its
// status, and the policies waiting for it when its compliance changes.
func (t *TemplateSync) policyHandler() handler.EventHandler {
	enqueue := func(q queue, names ...string) {
		for _, n := range names {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: n}})
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			enqueue(q, e.Object.GetName())
			enqueue(q, t.registry.dependents(policyRefOf(e.Object.GetName()))...)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			enqueue(q, e.Object.GetName())
			enqueue(q, t.registry.dependents(policyRefOf(e.Object.GetName()))...)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			if notStatusOnly.Update(e) {
				enqueue(q, e.ObjectNew.GetName())
			}
			o, ok1 := e.ObjectOld.(*policyv1.Policy)
			n, ok2 := e.ObjectNew.(*policyv1.Policy)
			if ok1 && ok2 && o.Status.ComplianceState != n.Status.ComplianceState {
				enqueue(q, t.registry.dependents(policyRefOf(n.Name))...)
			}
		},
	}
}

// eventHandler enqueues a policy when a compliance event about it is written.
func (t *TemplateSync) eventHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			ev, ok := e.Object.(*corev1.Event)
			if !ok || ev.InvolvedObject.Kind != "Policy" {
				return
			}
			if _, ok := history.TemplateOf(ev.Reason); ok {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ev.Namespace, Name: ev.InvolvedObject.Name}})
			}
		},
	}
}

// objectHandler maps a template or a dependency object to the policy the
// template belongs to and to the policies waiting for the object.
func (t *TemplateSync) objectHandler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		var out []reconcile.Request
		add := func(name string) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: name}})
		}
		if ns := obj.GetNamespace(); ns == "" || ns == t.Namespace {
			if owner := obj.GetLabels()[replication.LabelPolicy]; owner != "" {
				add(owner)
			}
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		for _, name := range t.registry.dependents(dependency.ObjectRef(gvk.GroupVersion().String(), gvk.Kind, obj.GetNamespace(), obj.GetName())) {
			add(name)
		}
		return out
	})
}
