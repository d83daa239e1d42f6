// Package localplane starts real Kubernetes control planes on this machine: a
// kube-apiserver and an etcd (envtest, with the binaries `make tools` builds into
// bin/envtest) with every CRD fleetpolicy needs installed — its own from
// manifests/crds/fleetpolicy and OCM's and OLM's copied by `make generate`.
//
// It serves the integration tests and `make demo`, never production: a hub and a
// spoke are two separate API servers, as in a real fleet. A plane alone has no
// kube-controller-manager and no kubelet, so nothing is garbage-collected and
// namespaces are never finalized. OCM's placement controller, which a real
// hub runs, is started on a plane with StartOCMPlacement (bin/ocm-placement,
// `make ocm-placement`). StartOCMHub makes a plane a whole OCM hub (with a
// kube-controller-manager: CSR signer, garbage collector, namespaces), and
// OCMHub.Join makes another plane a managed cluster that joins it through OCM
// registration and runs OCM's work agent (`make ocm-core`); still no kubelet
// runs pods. StartOCMPolicyAgents runs OCM's own policy agents on a managed
// plane.
package localplane
