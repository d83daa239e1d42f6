//go:build tools

// Package tools pins the kustomize that the Makefile builds into bin/.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
