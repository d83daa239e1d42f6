package localplane

import (
	"errors"
	"flag"
)

// ErrShortTest is what StartWith (and so Start and StartFleet) and
// StartProcess answer in a test binary run with -short (`make check`): no API
// server or upstream binary is started there. A test that starts one ends with
// testkit.FatalOrSkip, which skips on this error; a TestMain that starts one for its
// package skips the package (see testkit.SkipsPackage).
var ErrShortTest = errors.New("localplane: no API server or process under go test -short (make check); run without -short")

// shortTest reports whether this is a test binary run with -short. It reads the
// testing package's flag by name so that the binaries linking localplane (the
// demo, the bench) do not link the testing package; it parses the command line
// first when a TestMain has not yet, as TestMain's own documentation asks of a
// TestMain that reads flags.
func shortTest() bool {
	f := flag.Lookup("test.short")
	if f == nil {
		return false
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	return f.Value.String() == "true"
}
