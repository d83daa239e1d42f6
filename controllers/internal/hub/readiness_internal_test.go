package hub

import (
	"testing"
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
