// Package logging keeps secrets out of the controllers' logs: Bounded caps a
// logger at MaxVerbosity, below the levels at which client-go logs the bodies
// of API requests and responses. Both controllers' managers and binaries log
// through it; controllers/internal/securitytest proves no secret is logged.
package logging
