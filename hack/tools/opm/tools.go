//go:build tools

// Package tools pins opm, which serves the file-based catalog of the OLM
// end-to-end test (build it with CGO_ENABLED=0 -tags containers_image_openpgp).
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
