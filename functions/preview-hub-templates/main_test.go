package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

func TestGolden(t *testing.T) {
	krmtest.RunGolden(t, "testdata", previewHubTemplates)
}
