package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
)

// TestSpokeDefaultAddressesDifferFromTheHubs runs the README's two commands in one's
// head: bin/fleetpolicy-hub and bin/fleetpolicy-spoke with their defaults on
// one machine must not bind the same address.
func TestSpokeDefaultAddressesDifferFromTheHubs(t *testing.T) {
	h, s := hub.DefaultManagerOptions(), spoke.DefaultManagerOptions()
	hubAddrs := map[string]string{h.MetricsAddr: "metrics", h.ProbeAddr: "probes"}
	for addr, what := range map[string]string{s.MetricsAddr: "metrics", s.ProbeAddr: "probes"} {
		if hubWhat, taken := hubAddrs[addr]; taken {
			t.Errorf("the spoke's %s address %s is the hub's %s address", what, addr, hubWhat)
		}
	}
}
