//go:build tools

// Package tools pins the controller-gen that the Makefile builds into bin/.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
