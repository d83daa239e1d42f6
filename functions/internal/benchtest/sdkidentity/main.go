// Command sdkidentity is the kpt function SDK's identity function: fn.AsMain
// with a processor that changes nothing, the floor BenchmarkKitAgainstSDK
// holds package krm to (what a function of this repository would cost on the
// SDK alone). It is built by that benchmark only and never shipped.
package main

import (
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

func main() {
	if err := fn.AsMain(fn.ResourceListProcessorFunc(func(*fn.ResourceList) (bool, error) { return true, nil })); err != nil {
		os.Exit(1)
	}
}
