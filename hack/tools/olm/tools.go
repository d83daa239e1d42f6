//go:build tools

// Package tools pins the Operator Lifecycle Manager (olm-operator and
// catalog-operator) that the OLM end-to-end test runs against a local API server.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
