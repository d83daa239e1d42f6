package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"
	"time"
)

// TestDemoAppliesExamplesAndStops runs the demo as `make demo` does, stopping by
// itself, and checks that it applied the examples and printed a reachable
// kubeconfig for the hub and the spoke.
func TestDemoAppliesExamplesAndStops(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, 1, "examples", 100*time.Millisecond); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		`(?m)^\s+Policy\s+\d+\s`,
		`(?m)^\s+PlacementBinding\s+\d+\s`,
		`(?m)^\s+OperatorPolicy\s+\d+\s`,
		`(?m)^\s+hub\s+https://127\.0\.0\.1:\d+/\s+KUBECONFIG=\S+`,
		`(?m)^\s+spoke1\s+https://127\.0\.0\.1:\d+/\s+KUBECONFIG=\S+`,
		`(?m)^==> stopping the local API servers$`,
	} {
		if !regexp.MustCompile(want).Match(out.Bytes()) {
			t.Errorf("demo output lacks %s:\n%s", want, out.String())
		}
	}
}
