//go:build tools

// Package tools pins the kube-apiserver that envtest runs in this repository's tests.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
