// Command identity is the KRM function that changes nothing: it reads a
// ResourceList and writes it back through package krm, as every function of
// this repository does. Benchmarks run it on the same input as a function to
// measure the floor (process start, reading and writing the ResourceList) the
// function's own work adds to. It is built by tests only (krmtest.BuildFunction
// with "internal/krmtest/identity").
package main

import (
	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

func main() {
	krm.Function{Name: "identity", Help: "identity: writes its input ResourceList back unchanged\n",
		Process: func(*fn.ResourceList) error { return nil }}.Main()
}
