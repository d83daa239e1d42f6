package spoke

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestTemplateSyncGathersAnEvaluationsWrites checks when template sync looks
// at a policy again: what one evaluation of its template writes (the
// template's status, its compliance events) reaches it reportDelay later,
// so that one status write reports them all; a change of the template
// itself, and any change of an object a policy waits for, at once.
func TestTemplateSyncGathersAnEvaluationsWrites(t *testing.T) {
	const ns = "cluster1"
	ts := &TemplateSync{Namespace: ns, registry: newRegistry()}
	ts.registry.record("waiter", []dependency.Ref{dependency.ObjectRef("policy.open-cluster-management.io/v1", "ConfigurationPolicy", ns, "cp")})

	template := func(generation int64, status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"compliant": status}}}
		u.SetAPIVersion("policy.open-cluster-management.io/v1")
		u.SetKind("ConfigurationPolicy")
		u.SetNamespace(ns)
		u.SetName("cp")
		u.SetGeneration(generation)
		u.SetLabels(map[string]string{replication.LabelPolicy: "owner"})
		return u
	}
	complianceEvent := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: "owner.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Policy", Namespace: ns, Name: "owner"},
		Reason:         "policy: " + ns + "/cp",
	}
	objects, events := ts.objectHandler(), ts.eventHandler()
	cases := []struct {
		name       string
		send       func(context.Context, queue)
		now, later []string // queued at once, and after reportDelay
	}{
		{name: "the template's evaluation", send: func(ctx context.Context, q queue) {
			objects.Update(ctx, event.UpdateEvent{ObjectOld: template(1, ""), ObjectNew: template(1, "Compliant")}, q)
		}, now: []string{"waiter"}, later: []string{"owner"}},
		{name: "a change of the template's spec", send: func(ctx context.Context, q queue) {
			objects.Update(ctx, event.UpdateEvent{ObjectOld: template(1, "Compliant"), ObjectNew: template(2, "Compliant")}, q)
		}, now: []string{"owner", "waiter"}},
		{name: "the template's deletion", send: func(ctx context.Context, q queue) {
			objects.Delete(ctx, event.DeleteEvent{Object: template(1, "Compliant")}, q)
		}, now: []string{"owner", "waiter"}},
		{name: "a compliance event", send: func(ctx context.Context, q queue) {
			events.Create(ctx, event.CreateEvent{Object: complianceEvent}, q)
		}, later: []string{"owner"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			tc.send(t.Context(), q)
			if got := drain(q); !equalNames(got, tc.now) {
				t.Errorf("queued at once: %v, want %v", got, tc.now)
			}
			time.Sleep(reportDelay + 50*time.Millisecond)
			if got := drain(q); !equalNames(got, tc.later) {
				t.Errorf("queued after reportDelay: %v, want %v", got, tc.later)
			}
		})
	}
}

// drain takes and returns the names of what q holds now.
func drain(q queue) []string {
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		out = append(out, req.Name)
		q.Done(req)
		q.Forget(req)
	}
	return out
}

// equalNames says whether got and want hold the same names, in any order.
func equalNames(got, want []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}
