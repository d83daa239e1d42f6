// Package securitytest proves security properties of the hub and spoke
// controllers as they run against real API servers (a hub and a spoke, see
// package localplane): no secret they handle — Secret data that policies
// enforce or inspect, the credentials of the spoke's hub connection, the hub
// webhook's TLS key — reaches a log line at the most verbose level the
// binaries can be asked for, an Event, or a policy's status. It holds tests
// only.
package securitytest
