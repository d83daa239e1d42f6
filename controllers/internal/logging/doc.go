// Package logging keeps the controllers' logs safe and meaningful. Bounded
// caps a logger at MaxVerbosity, below the levels at which client-go logs the
// bodies of API requests and responses: both controllers' managers and
// binaries log through it, and controllers/internal/securitytest proves no
// secret is logged. QuietWhenStopping wraps every reconciler of both
// controllers, so that a shutdown does not log each reconcile it interrupts as
// a "Reconciler error".
package logging
