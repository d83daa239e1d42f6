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
// Direction 2, OCM's governance-policy-propagator with fleetpolicy's spoke:
// the propagator runs as a process against a hub API server that carries
// OCM's policy CRDs (PolicyAutomation included: the propagator does not start
// without it); each managed cluster is an API server with fleetpolicy's
// spoke (bin/fleetpolicy-spoke) as a process, reaching the hub with the same
// least-privilege identity. The hops proven are replication, spec sync,
// template sync, enforcement, status back to the replica and to the root,
// dependency gating (the propagator's canonical dependency names), a spec
// change carrying hub templates (one encrypted), a hub template error,
// a PolicySet, selective enforcement, an OperatorPolicy installing an
// operator through real OLM on cluster1 (localplane.StartOLM), a cluster
// leaving the placement, root deletion, and that the spoke stops writing a
// status field OCM's Policy CRD lacks.
//
// fleetpolicy's spoke with OCM's evaluator (ocmevaluator_test.go): the hub and
// the spoke run in process, the spoke with --configurationpolicy-evaluator=ocm
// and --operatorpolicy-evaluator=ocm, and OCM's config-policy-controller runs
// as a process against the managed cluster, which carries fleetpolicy's CRDs
// or OCM's ConfigurationPolicy and OperatorPolicy CRDs. The hops proven are
// spec sync, the encryption key copy, template sync, dependency gating,
// evaluation and enforcement by OCM's controller only, status to the root,
// pruning by OCM's controller and the OperatorPolicy path (template sync,
// OCM's evaluation, fleetpolicy's own spelling refused, fleetpolicy's finalizer
// released).
//
// Each direction is one test whose hub and managed clusters every hop
// shares; hops_test.go holds the hops both directions check.
//
// The tests fail, not skip, when the OCM or OLM binaries are missing.
package interoptest
