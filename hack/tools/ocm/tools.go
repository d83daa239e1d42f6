//go:build tools

// Package tools pins OCM's core at one version: the placement controller (the
// real scheduler the scheduling test compares shared/scheduling with), and
// registration, work and addon (the hub and agents a cluster joins through and
// the fleetpolicy add-on is installed by, in the add-on test and `make demo`).
package tools

import (
	_ "open-cluster-management.io/ocm/cmd/addon"
	_ "open-cluster-management.io/ocm/cmd/placement"
	_ "open-cluster-management.io/ocm/cmd/registration"
	_ "open-cluster-management.io/ocm/cmd/work"
)
