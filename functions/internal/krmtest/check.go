package krmtest

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// ErrorMessages are the messages of the error results the case expects.
func (c Case) ErrorMessages(t testing.TB) []string {
	t.Helper()
	var msgs []string
	for _, r := range c.ExpectedResults(t) {
		if r.Severity == fn.Error {
			msgs = append(msgs, r.Message)
		}
	}
	return msgs
}

// CheckRun fails the test unless a run through kustomize or kpt failed exactly
// when the case expects error results, with each expected message shown to the
// user: its first line, as written or with its quotes escaped (kpt prints
// results as quoted strings).
func CheckRun(t testing.TB, c Case, out Output) {
	t.Helper()
	wantErrors := c.ErrorMessages(t)
	if failed := out.Err != nil; failed != (len(wantErrors) > 0) {
		t.Fatalf("failed = %v (%v), want %v\nstdout:\n%s\nstderr:\n%s", failed, out.Err, len(wantErrors) > 0, out.Stdout, out.Stderr)
	}
	shown := out.Stdout + out.Stderr
	for _, msg := range wantErrors {
		msg = strings.SplitN(msg, "\n", 2)[0]
		if !strings.Contains(shown, msg) && !strings.Contains(shown, strings.ReplaceAll(msg, `"`, `\"`)) {
			t.Errorf("the message %q is not shown; stdout:\n%s\nstderr:\n%s", msg, out.Stdout, out.Stderr)
		}
	}
}
