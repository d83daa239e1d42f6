//go:build tools

// Package tools pins the etcd that envtest runs in this repository's tests.
package tools

import _ "go.etcd.io/etcd/server/v3"
