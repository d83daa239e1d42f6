// Package interoptest runs fleetpolicy next to OCM's own policy components
// (built from the Go module proxy by `make ocm-policy-binaries`) on local API
// servers, and fails, naming the hop, when a hop between them breaks.
//
// Direction 1, fleetpolicy's hub with OCM's spoke: the hub runs in process
// against a hub API server; each managed cluster is an API server of its own
// with OCM's governance-policy-framework-addon and config-policy-controller
// running against it as processes, the add-on reaching the hub with the
// least-privilege identity of manifests/spoke/hub (a ServiceAccount token of
// the cluster's namespace, no admin). The hops proven are replication, spec
// sync, template sync, enforcement, status back to the replica and to the
// root, a Progressive rollout to completion, dependency gating with a
// ProgressivePerGroup rollout, selective enforcement (OCM's bindingOverrides
// and subFilter), a cluster leaving the placement, and root deletion.
//
// The tests fail, not skip, when the OCM binaries are missing.
package interoptest
