package spoke

import (
	"context"
	"time"

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

// reportDelay is how long template sync gathers what one evaluation of a
// policy's template writes before it reports the policy's status: an
// evaluation writes its compliance events and its status within a few
// milliseconds, and reporting each as it arrives cost two to four status
// writes per evaluation on the managed cluster instead of one.
const reportDelay = 100 * time.Millisecond

// eventHandler enqueues a policy, reportDelay later, when a compliance event
// about it is written.
func (t *TemplateSync) eventHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			ev, ok := e.Object.(*corev1.Event)
			if !ok || ev.InvolvedObject.Kind != "Policy" {
				return
			}
			if _, ok := history.TemplateOf(ev.Reason); ok {
				q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ev.Namespace, Name: ev.InvolvedObject.Name}}, reportDelay)
			}
		},
	}
}

// objectHandler maps a template or a dependency object to the policy the
// template belongs to and to the policies waiting for the object. A change
// of a template's status alone (its evaluation) reaches its policy
// reportDelay later; everything else at once.
func (t *TemplateSync) objectHandler() handler.EventHandler {
	enqueue := func(q queue, obj client.Object, ownerDelay time.Duration) {
		req := func(name string) reconcile.Request {
			return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: t.Namespace, Name: name}}
		}
		if ns := obj.GetNamespace(); ns == "" || ns == t.Namespace {
			if owner := obj.GetLabels()[replication.LabelPolicy]; owner != "" {
				q.AddAfter(req(owner), ownerDelay) // at once when not positive
			}
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		for _, name := range t.registry.dependents(dependency.ObjectRef(gvk.GroupVersion().String(), gvk.Kind, obj.GetNamespace(), obj.GetName())) {
			q.Add(req(name))
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { enqueue(q, e.Object, 0) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			delay := time.Duration(0)
			if !notStatusOnly.Update(e) {
				delay = reportDelay
			}
			enqueue(q, e.ObjectOld, delay)
			enqueue(q, e.ObjectNew, delay)
		},
		DeleteFunc:  func(_ context.Context, e event.DeleteEvent, q queue) { enqueue(q, e.Object, 0) },
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { enqueue(q, e.Object, 0) },
	}
}
