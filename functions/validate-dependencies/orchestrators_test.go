package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestThroughOrchestrators runs every golden case through kustomize, kpt fn
// render (as a validator and as a mutator) and kpt fn eval: the function
// changes nothing, neither the build nor any file of a package.
func TestThroughOrchestrators(t *testing.T) {
	krmtest.Orchestrators{
		Function:      "validate-dependencies",
		DefaultConfig: []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: ValidateDependencies\nmetadata:\n  name: validate-dependencies\n"),
		RenderStages:  []string{"validators", "mutators"},
	}.Run(t)
}
