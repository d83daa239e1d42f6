//go:build tools

// Package tools pins the Kubernetes components built from k8s.io/kubernetes at
// one version: the kube-apiserver envtest runs in this repository's tests,
// kube-controller-manager (the CSR signer and garbage collector an OCM hub
// needs), and the rest of the real node `make e2e` runs (mk/node.mk): kubelet,
// kube-scheduler, kube-proxy and kubectl.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
