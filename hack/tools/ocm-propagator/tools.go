//go:build tools

// Package tools pins OCM's governance-policy-propagator, which the interop test
// (controllers/internal/interoptest) runs as a process against local API servers.
package tools

import _ "open-cluster-management.io/governance-policy-propagator"
