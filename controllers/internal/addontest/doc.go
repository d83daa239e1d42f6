// Package addontest proves fleetpolicy as an OCM add-on on real OCM: a hub
// (kube-apiserver, kube-controller-manager, OCM's registration controller,
// addon manager and placement controller) and managed clusters, each its own
// API server, that join through OCM's registration agent and run OCM's work
// agent; manifests/addon applied on the hub as a user would, the spoke
// started as the process its add-on Deployment describes (fakeKubelet: no
// kubelet runs pods in `make test`), with the hub credentials OCM
// registration issued; and OCM's own policy agents taking a cluster over from
// the add-on and back. The binaries are `make ocm-core`'s and `make
// ocm-policy-binaries`'. docs/ocm-addon.md says what it proves.
package addontest
