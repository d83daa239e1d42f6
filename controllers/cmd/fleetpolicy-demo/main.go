// Command fleetpolicy-demo runs fleetpolicy's main job end to end on this
// machine, as `make demo` does, on a real OCM fleet: it starts a local hub and
// one API server per managed cluster of examples/demo (real kube-apiserver +
// etcd each), makes the hub an OCM hub (kube-controller-manager as CSR signer,
// OCM's registration controller, addon manager and placement controller, the
// binaries of `make ocm-core`), and has each cluster join it through OCM
// registration (registration and work agents, bootstrap token, CSR, accepted
// as `clusteradm accept` does), with the example's labels and cluster claims.
// It applies manifests/addon-fleetwide, so that fleetpolicy's spoke arrives on
// every cluster as the OCM add-on fleetpolicy (a ManifestWork; a hub kubeconfig
// issued by OCM registration), runs the hub controller (with its placement
// webhook) and each cluster's spoke with that kubeconfig, and shows joining and
// add-on health. Then it renders examples/demo through kustomize with the
// fleetpolicy KRM functions, applies the result to the hub, and shows live a
// progressive rollout wave by wave, a dependency chain resolving, a placement
// policy excluding clusters and an OperatorPolicy reaching its status. The
// console (fleetpolicy-console's server, with the hub's kubeconfig, on
// loopback) runs from before the fleet is applied, and its URL is printed, so
// that the rollout can be followed in a browser too. Then it stops and removes
// everything (or, with --wait, keeps running until Ctrl-C).
//
// No kubelet runs here: the add-on's Deployment is applied but its pod never
// starts (its ManagedClusterAddOn stays not Available, as the demo says); the
// spokes run in-process instead.
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
	flag.BoolVar(&o.wait, "wait", false, "keep the local fleet running after the demo until Ctrl-C (kubeconfigs and the console's URL are printed)")
	flag.StringVar(&o.consoleAddr, "console-address", o.consoleAddr, "where the console (fleetpolicy-console, with the hub's kubeconfig) listens while the demo runs; a busy port falls back to any free one")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "fleetpolicy-demo:", err)
		os.Exit(1)
	}
}

type options struct {
	example     string
	timeout     time.Duration
	wait        bool
	consoleAddr string
}

func defaultOptions() options {
	return options{example: "examples/demo", timeout: 4 * time.Minute, consoleAddr: "127.0.0.1:8090"}
}

// step prints a progress line.
func step(out io.Writer, format string, args ...any) {
	fmt.Fprintf(out, "==> "+format+"\n", args...)
}
