// Package faulttest injects faults into the controllers against real API
// servers: several hub processes with leader election, conflicting writers on
// replicas, an API server outage in the middle of a propagation, and a spoke
// that loses its connection to the hub (through a test-only TCP proxy) and
// gets it back.
package faulttest
