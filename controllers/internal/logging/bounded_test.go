package logging

import (
	"testing"

	"github.com/go-logr/logr/funcr"
)

// TestBoundedDropsBodyLevels: a bounded logger passes lines up to MaxVerbosity,
// errors always, and drops the levels at which client-go logs request bodies,
// also through loggers derived from it.
func TestBoundedDropsBodyLevels(t *testing.T) {
	var lines []string
	logger := Bounded(funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) },
		funcr.Options{Verbosity: 10}))
	derived := logger.WithName("reconciler").WithValues("k", "v")
	for _, l := range []interface{ Info(string, ...any) }{logger.V(MaxVerbosity), derived.V(MaxVerbosity)} {
		l.Info("kept")
	}
	logger.V(MaxVerbosity + 1).Info("body")
	derived.V(10).Info("body")
	derived.Error(nil, "error kept")
	if len(lines) != 3 {
		t.Fatalf("lines %q, want the two at V(%d) and the error", lines, MaxVerbosity)
	}
	if logger.V(MaxVerbosity+1).Enabled() || derived.V(8).Enabled() {
		t.Error("levels above MaxVerbosity report enabled: client-go would format bodies for them")
	}
}
