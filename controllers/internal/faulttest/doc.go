// Package faulttest injects faults into the hub against a real API server:
// several hub processes with leader election, conflicting writers on replicas.
package faulttest
