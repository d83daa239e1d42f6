package hub

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// TestAcquire: until one of a root's resolutions succeeded at its
// fingerprint they run one at a time (another root's do not wait); once it
// did, they run side by side; a stalled root gets no slot until its backoff
// ends. Each step fails if its rule is removed from acquire.
func TestAcquire(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	h := newHubTemplates(nil, nil, nil, nil, clk)
	root, other := types.NamespacedName{Namespace: "ns", Name: "r"}, types.NamespacedName{Namespace: "ns", Name: "o"}
	ctx := context.Background()
	waits := func(root types.NamespacedName, fp string) bool {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		release, err := h.acquire(short, root, fp)
		if err == nil {
			release()
		}
		return errors.Is(err, context.DeadlineExceeded)
	}

	release, err := h.acquire(ctx, root, "fp1")
	if err != nil {
		t.Fatal(err)
	}
	if !waits(root, "fp1") {
		t.Error("a second resolution of a root none of whose resolutions succeeded ran beside the first")
	}
	if waits(other, "fp1") {
		t.Error("another root waited for this root's probe")
	}
	release()

	h.proven[root] = "fp1"
	release, err = h.acquire(ctx, root, "fp1")
	if err != nil {
		t.Fatal(err)
	}
	if waits(root, "fp1") {
		t.Error("a proven root's resolutions did not run side by side")
	}
	release()
	release, err = h.acquire(ctx, root, "fp2")
	if err != nil {
		t.Fatal(err)
	}
	if !waits(root, "fp2") {
		t.Error("a changed root (new fingerprint) was taken as proven")
	}
	release()

	bound := &templates.BoundError{Bound: "time", Limit: "3s"}
	h.stalled[root] = &stall{until: clk.Now().Add(time.Minute), err: bound}
	if _, err := h.acquire(ctx, root, "fp1"); !errors.As(err, new(stalledError)) || !errors.Is(err, bound) {
		t.Errorf("a stalled root got a slot: %v", err)
	}
	clk.SetTime(clk.Now().Add(2 * time.Minute))
	if release, err := h.acquire(ctx, root, "fp1"); err != nil {
		t.Errorf("a root past its backoff got no slot: %v", err)
	} else {
		release()
	}
}
