package hub

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestReadyOnceEveryControllerStarted: the check fails until every
// controller registered with it has started.
func TestReadyOnceEveryControllerStarted(t *testing.T) {
	s := &controllerStarts{}
	s.expect("propagator")
	s.expect("policyset-status")
	if err := s.Check(nil); err == nil {
		t.Fatal("no controller started: ready, want not ready")
	}
	s.started("propagator")
	if err := s.Check(nil); err == nil {
		t.Fatal("one of two controllers started: ready, want not ready")
	}
	s.started("policyset-status")
	if err := s.Check(nil); err != nil {
		t.Fatalf("every controller started: %v, want ready", err)
	}
}

// TestStartProbeMarksItsControllerStarted: the start probe marks the
// controller whose worker took it started and reaches no reconciler; every
// other request reaches the controller's reconciler.
func TestStartProbeMarksItsControllerStarted(t *testing.T) {
	s := &controllerStarts{}
	s.expect("propagator")
	var reconciled []reconcile.Request
	r := s.reconciler("propagator", reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		reconciled = append(reconciled, req)
		return reconcile.Result{}, nil
	}))
	root := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "policies", Name: "p"}}
	if _, err := r.Reconcile(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(nil); err == nil {
		t.Fatal("a root's request marked the controller started")
	}
	if _, err := r.Reconcile(context.Background(), startProbe); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(nil); err != nil {
		t.Fatalf("after the start probe: %v, want ready", err)
	}
	if len(reconciled) != 1 || reconciled[0] != root {
		t.Fatalf("the reconciler got %v, want only the root's request", reconciled)
	}
}
