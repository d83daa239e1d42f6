// Package rollouttest holds the integration tests of the hub's live progressive
// rollout against a real API server, with a fake spoke (test-only) that reports
// replica compliance as a spoke's status sync would.
package rollouttest
