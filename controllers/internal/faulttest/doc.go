// Package faulttest injects faults into the hub against a real API server:
// several hub processes with leader election, conflicting writers on replicas,
// and an API server outage in the middle of a propagation.
package faulttest
