//go:build tools

// Package tools pins OCM's placement controller, which the scheduling test
// runs against a local API server as the peer of shared/scheduling.
package tools

import _ "open-cluster-management.io/ocm/cmd/placement"
