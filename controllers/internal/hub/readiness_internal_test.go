package hub

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// TestStandbyIsReadyForItsControllers: a process leader election has not
// elected acts on nothing but serves the webhook, so its controllers do not
// hold its readiness; once elected, they do until each has started.
func TestStandbyIsReadyForItsControllers(t *testing.T) {
	elected := false
	s := &controllerStarts{elected: func() bool { return elected }}
	s.options("propagator", controller.Options{})
	s.options("policyset-status", controller.Options{})
	if err := s.Check(nil); err != nil {
		t.Fatalf("standby: %v, want ready", err)
	}
	elected = true
	if err := s.Check(nil); err == nil {
		t.Fatal("elected, no controller started: ready, want not ready")
	}
	s.started("propagator")
	if err := s.Check(nil); err == nil {
		t.Fatal("elected, one of two controllers started: ready, want not ready")
	}
	s.started("policyset-status")
	if err := s.Check(nil); err != nil {
		t.Fatalf("elected, every controller started: %v, want ready", err)
	}
}
