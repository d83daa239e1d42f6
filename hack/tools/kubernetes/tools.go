//go:build tools

// Package tools pins the Kubernetes components built from k8s.io/kubernetes at
// one version: the kube-apiserver envtest runs in this repository's tests, and
// kube-controller-manager (the CSR signer and garbage collector an OCM hub needs).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
