package krmtest

import (
	"bytes"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

// RunParsed runs f on input and returns its output ResourceList and exit code,
// failing t unless the exit code is 0 or 1 and the output is a ResourceList.
func RunParsed(t testing.TB, f krm.Function, input []byte) (*fn.ResourceList, int) {
	t.Helper()
	var out bytes.Buffer
	code := f.Run(bytes.NewReader(input), &out, &bytes.Buffer{})
	if code != 0 && code != 1 {
		t.Fatalf("exit code %d", code)
	}
	rl, err := fn.ParseResourceList(out.Bytes())
	if err != nil {
		t.Fatalf("output is not a ResourceList: %v\n%s", err, out.String())
	}
	return rl, code
}

// FuzzRun is the part every function's fuzz target shares: f runs on input
// (RunParsed's checks), and input that is not a ResourceList must fail. It
// returns the input and output ResourceLists and the exit code; ok is false
// when the input is unreadable and there is nothing more to check.
func FuzzRun(t testing.TB, f krm.Function, input []byte) (in, out *fn.ResourceList, code int, ok bool) {
	t.Helper()
	out, code = RunParsed(t, f, input)
	in, err := fn.ParseResourceList(input)
	if err != nil {
		if code != 1 {
			t.Fatalf("unreadable input passed: %v", err)
		}
		return nil, out, code, false
	}
	return in, out, code, true
}
