package localplane

import (
	"context"
	"testing"
	"time"
)

// StartFleetForTest starts a hub and n spokes for a test and stops them when the
// test ends. It fails the test when the control plane binaries are missing: run
// `make tools` (the Makefile's test targets do).
func StartFleetForTest(t testing.TB, n int) *Fleet {
	t.Helper()
	f, err := StartFleet(context.Background(), n)
	if err != nil {
		t.Fatalf("starting local fleet: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Logf("stopping local fleet: %v", err)
		}
	})
	return f
}

// Eventually polls check until it returns "" and fails the test with check's
// last answer when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = check(); last == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %s", what, last)
}
