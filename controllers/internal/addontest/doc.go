// Package addontest proves fleetpolicy as an OCM add-on on real OCM: a hub
// (kube-apiserver, kube-controller-manager, OCM's registration controller,
// addon manager and placement controller) and managed clusters, each its own
// API server, that join through OCM's registration agent and run OCM's work
// agent; manifests/addon applied on the hub as a user would, the spoke
// started as the process its add-on Deployment describes, with the hub
// credentials OCM registration issued. The binaries are `make ocm-core`'s.
package addontest
