// Command fleetpolicy-demo runs fleetpolicy's main job end to end on this
// machine, as `make demo` does: it starts a local hub and one spoke API server
// per managed cluster of examples/demo (real kube-apiserver + etcd each), runs the
// hub controller (with its placement webhook), OCM's placement controller
// (bin/ocm-placement, which schedules the Placements) and a spoke agent per
// cluster,
// renders examples/demo through kustomize with the fleetpolicy KRM functions,
// applies the result to the hub, and shows live a progressive rollout wave by
// wave, a dependency chain resolving, a placement policy excluding clusters and
// an OperatorPolicy reaching its status. Then it stops and removes everything
// (or, with --wait, keeps running until Ctrl-C).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	o := defaultOptions()
	flag.StringVar(&o.example, "example", o.example, "kustomization to render and apply, relative to the repository root")
	flag.DurationVar(&o.timeout, "timeout", o.timeout, "give up when the fleet has not converged after this long")
	flag.BoolVar(&o.wait, "wait", false, "keep the local fleet running after the demo until Ctrl-C (kubeconfigs are printed)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "fleetpolicy-demo:", err)
		os.Exit(1)
	}
}

type options struct {
	example string
	timeout time.Duration
	wait    bool
}

func defaultOptions() options {
	return options{example: "examples/demo", timeout: 4 * time.Minute}
}

// step prints a progress line.
func step(out io.Writer, format string, args ...any) {
	fmt.Fprintf(out, "==> "+format+"\n", args...)
}
