// Command fleetpolicy-demo runs fleetpolicy end to end on this machine: it starts a
// local hub and spoke (real kube-apiserver + etcd each, with every CRD
// installed), applies the manifests under examples/ to the hub, prints what it
// created and how to reach both API servers, and stops cleanly on Ctrl-C (or after
// --run-for, for scripted runs). `make demo` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

func main() {
	spokes := flag.Int("spokes", 1, "number of spoke API servers to start")
	examples := flag.String("examples", "examples", "folder of manifests to apply to the hub, relative to the repository root")
	runFor := flag.Duration("run-for", 0, "stop by itself after this long (0: run until Ctrl-C)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *spokes, *examples, *runFor); err != nil {
		fmt.Fprintln(os.Stderr, "fleetpolicy-demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, spokes int, examples string, runFor time.Duration) error {
	step := func(format string, args ...any) {
		fmt.Fprintf(out, "==> "+format+"\n", args...)
	}
	root, err := localplane.RepoRoot()
	if err != nil {
		return err
	}

	step("starting a local hub and %d spoke API server(s)", spokes)
	start := time.Now()
	fleet, err := localplane.StartFleet(ctx, spokes)
	if err != nil {
		return err
	}
	defer func() {
		step("stopping the local API servers")
		if err := fleet.Stop(); err != nil {
			fmt.Fprintln(out, "    stop:", err)
		}
	}()
	step("started in %s", time.Since(start).Round(time.Millisecond))

	step("applying %s/ to the hub", examples)
	created, err := applyFolder(ctx, fleet.Hub, filepath.Join(root, examples))
	if err != nil {
		return err
	}
	printInventory(out, created)

	step("reach the API servers with kubectl:")
	for _, p := range append([]*localplane.Plane{fleet.Hub}, fleet.Spokes...) {
		fmt.Fprintf(out, "    %-7s %s   KUBECONFIG=%s\n", p.Name, p.Host(), p.KubeconfigPath)
	}

	if runFor > 0 {
		step("running for %s", runFor)
		select {
		case <-ctx.Done():
		case <-time.After(runFor):
		}
	} else {
		step("running; press Ctrl-C to stop")
		<-ctx.Done()
	}
	return nil
}

func applyFolder(ctx context.Context, hub *localplane.Plane, dir string) ([]*unstructured.Unstructured, error) {
	files, err := localplane.ManifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var created []*unstructured.Unstructured
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		objs, err := localplane.ReadManifests(file, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		stored, err := localplane.Apply(ctx, hub.Client, localplane.APIObjects(objs))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		created = append(created, stored...)
	}
	return created, nil
}

// printInventory prints the applied objects grouped by kind, one line per kind.
func printInventory(out io.Writer, objs []*unstructured.Unstructured) {
	byKind := map[string][]string{}
	for _, o := range objs {
		name := o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			name = ns + "/" + name
		}
		byKind[o.GetKind()] = append(byKind[o.GetKind()], name)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		names := byKind[k]
		shown := names
		if len(shown) > 4 {
			shown = append(shown[:4:4], fmt.Sprintf("... %d more", len(names)-4))
		}
		fmt.Fprintf(out, "    %-20s %3d  %s\n", k, len(names), strings.Join(shown, ", "))
	}
}
