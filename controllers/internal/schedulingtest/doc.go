// Package schedulingtest proves shared/scheduling, the offline scheduler the
// plan-rollout function uses, against the real one: OCM's placement controller
// (open-cluster-management.io/ocm v1.2.0, bin/ocm-placement, `make
// ocm-placement`) runs against a local API server, and the PlacementDecisions
// and decision groups it writes for a set of Placements over one fleet must be
// those scheduling.Schedule computes from the same objects.
package schedulingtest
