//go:build tools

// Package tools pins OCM's config-policy-controller, which the interop test
// (controllers/internal/interoptest) runs as a process against local API servers.
package tools

import _ "open-cluster-management.io/config-policy-controller"
