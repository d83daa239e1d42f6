package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// demo is one run: the planes, OCM's hub, the controllers and what was
// rendered.
type demo struct {
	out  io.Writer
	root string
	// ctx lives as long as the demo: what follows a cluster's Secret for a
	// spoke stops with it.
	ctx    context.Context
	cancel context.CancelFunc
	// tmp holds what the demo writes besides the planes: each add-on's
	// projected hub kubeconfig.
	tmp    string
	scheme *runtime.Scheme
	hub    *localplane.Plane
	// hubC is a client of the hub with the OCM APIs the demo reads.
	hubC     client.Client
	ocm      *localplane.OCMHub
	spokes   map[string]*localplane.Plane
	rendered []*unstructured.Unstructured
	stops    []func()
}

func run(ctx context.Context, out io.Writer, o options) error {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard()) // libraries that log through klog (a template watcher's start and stop)
	root, err := localplane.RepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fleetpolicy-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithCancel(ctx)
	d := &demo{out: out, root: root, ctx: ctx, cancel: cancel, tmp: tmp, scheme: ocmScheme(), spokes: map[string]*localplane.Plane{}}
	defer d.stop()

	step(out, "rendering %s with kustomize and the fleetpolicy functions", o.example)
	if err := d.render(ctx, o.example); err != nil {
		return err
	}
	members, err := managedClusters(d.rendered)
	if err != nil {
		return err
	}
	clusters := namesOf(d.rendered, "ManagedCluster")
	if len(clusters) == 0 {
		return fmt.Errorf("%s defines no ManagedCluster", o.example)
	}

	step(out, "starting a hub and %d managed cluster API servers (%v): kube-apiserver and etcd each", len(clusters), clusters)
	start := time.Now()
	if err := d.startPlanes(clusters); err != nil {
		return err
	}
	step(out, "started in %s", time.Since(start).Round(100*time.Millisecond))

	step(out, "making the hub an OCM hub: kube-controller-manager (CSR signer, garbage collector), OCM's registration, addon manager and placement controller")
	if d.ocm, err = localplane.StartOCMHub(ctx, d.hub, localplane.OCMHubOptions{}); err != nil {
		return err
	}
	d.stops = append(d.stops, d.ocm.Stop)
	// Each cluster joins, then gets the add-on, while the hub side is set up.
	step(out, "joining %d clusters through OCM registration: registration and work agents, bootstrap token, CSR, accepted as `clusteradm accept` does; the fleetpolicy add-on follows on each", len(clusters))
	start = time.Now()
	joined := make([]joining, len(members))
	arrived := make([]addonArrival, len(members))
	joinErr := make(chan error, 1)
	joinCtx, stopJoining := context.WithCancel(ctx)
	defer stopJoining()
	go func() {
		joinErr <- localplane.Parallel(len(members), len(members), func(i int) error {
			mc := members[i]
			var err error
			if joined[i], err = d.joinCluster(joinCtx, mc); err != nil {
				return err
			}
			if arrived[i], err = d.waitAddOn(joinCtx, mc.Name, filepath.Join(d.tmp, mc.Name, "hub-kubeconfig")); err != nil {
				return err
			}
			return d.reportJoin(joinCtx, mc, &joined[i])
		})
	}()
	if err = d.setUpHub(ctx); err != nil {
		stopJoining()
	}
	jerr := <-joinErr
	for _, j := range joined {
		for _, line := range j.lines {
			fmt.Fprintf(out, "    %-13s %s\n", j.cluster, line)
		}
	}
	step(out, "the fleetpolicy add-on on each cluster: its ManifestWork applied, its hub kubeconfig issued by OCM registration")
	for _, a := range arrived {
		for _, line := range a.lines {
			fmt.Fprintf(out, "    %-13s %s\n", a.cluster, line)
		}
	}
	if err := errors.Join(err, jerr); err != nil {
		return err
	}
	step(out, "joined, and the add-on arrived, in %s", time.Since(start).Round(100*time.Millisecond))

	step(out, "starting each cluster's spoke in-process, as its add-on Deployment would run it: with the hub kubeconfig OCM issued")
	for _, a := range arrived {
		if err := d.startSpoke(ctx, a.cluster, a.hubCfg); err != nil {
			return err
		}
	}
	step(out, "add-on health on the hub (ManagedClusterAddOn %s of each cluster)", addonName)
	if err := d.addonHealth(ctx, clusters); err != nil {
		return err
	}

	url, err := d.startConsole(o.consoleAddr)
	if err != nil {
		return err
	}
	step(out, "the console: %s (read-only, with the hub's kubeconfig; it follows the fleet live)", url)

	step(out, "applying the rendered fleet to the hub")
	if err := d.applyFleet(ctx); err != nil {
		return err
	}

	step(out, "watching the fleet converge (up to %s)", o.timeout)
	w := newWatcher(out, d.hub, d.spokes, clusters)
	if err := w.run(ctx, o.timeout); err != nil {
		return err
	}

	if o.wait {
		step(out, "the fleet keeps running; reach it with kubectl:")
		fmt.Fprintf(out, "    %-13s KUBECONFIG=%s\n", "hub", d.hub.KubeconfigPath)
		for _, c := range clusters {
			fmt.Fprintf(out, "    %-13s KUBECONFIG=%s\n", c, d.spokes[c].KubeconfigPath)
		}
		fmt.Fprintf(out, "    %-13s %s\n", "console", url)
		step(out, "press Ctrl-C to stop")
		<-ctx.Done()
	}
	return nil
}

func (d *demo) stop() {
	defer d.cancel()
	if len(d.stops) == 0 && d.hub == nil {
		return
	}
	step(d.out, "stopping the controllers, OCM and the API servers")
	for i := len(d.stops) - 1; i >= 0; i-- {
		d.stops[i]()
	}
	planes := []*localplane.Plane{d.hub}
	for _, p := range d.spokes {
		planes = append(planes, p)
	}
	_ = localplane.Parallel(len(planes), len(planes), func(i int) error {
		if planes[i] != nil {
			_ = planes[i].Stop()
		}
		return nil
	})
}

// render runs the real kustomize with exec functions on the example.
func (d *demo) render(ctx context.Context, example string) error {
	kustomize := filepath.Join(d.root, "bin", "kustomize")
	if _, err := os.Stat(kustomize); err != nil {
		return fmt.Errorf("%s missing: run `make tools build` (make demo does)", kustomize)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(d.root, example))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kustomize build %s: %v\n%s", example, err, stderr.String())
	}
	objs, err := localplane.ReadManifests(example, &stdout)
	if err != nil {
		return err
	}
	d.rendered = objs
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	fmt.Fprintf(d.out, "    %d objects: %v\n", len(objs), kinds)
	return nil
}

func namesOf(objs []*unstructured.Unstructured, kind string) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o.GetName())
		}
	}
	return out
}

func (d *demo) startPlanes(clusters []string) error {
	raw, err := os.ReadFile(filepath.Join(d.root, "manifests", "hub", "webhook.yaml"))
	if err != nil {
		return err
	}
	webhook := admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(raw, &webhook); err != nil {
		return err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	start := func(name string, opts localplane.Options, set func(*localplane.Plane)) {
		defer wg.Done()
		p, err := localplane.StartWith(name, opts)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		set(p)
	}
	wg.Add(1 + len(clusters))
	go start("hub", localplane.Options{
		CRDPaths:         localplane.OCMHubCRDPaths,
		MutatingWebhooks: []admissionregistrationv1.MutatingWebhookConfiguration{webhook},
	}, func(p *localplane.Plane) { d.hub = p })
	for _, c := range clusters {
		go start(c, localplane.Options{CRDPaths: managedClusterCRDPaths}, func(p *localplane.Plane) { d.spokes[c] = p })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	hubC, err := client.New(d.hub.Config, client.Options{Scheme: d.scheme})
	d.hubC = hubC
	return err
}

// applyInventory applies what must exist before the fleet: namespaces, the
// cluster sets and their bindings (so that OCM's placement controller
// schedules each Placement once, on every cluster it may choose), and the
// placement policies. The example's ManagedClusters are not applied: the
// clusters join (joinCluster).
func (d *demo) applyInventory(ctx context.Context) error {
	if err := localplane.EnsureNamespace(ctx, d.hub.Client, placement.Namespace); err != nil {
		return err
	}
	var first []*unstructured.Unstructured
	for _, o := range d.rendered {
		if inInventory(o) {
			first = append(first, o)
		}
	}
	_, err := localplane.Apply(ctx, d.hub.Client, first)
	return err
}

// inInventory reports whether o is part of what a hub holds before any policy
// arrives: namespaces, the cluster sets and the namespaces' bindings to them,
// and ConfigMaps (the placement policies).
func inInventory(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "Namespace", "ManagedClusterSet", "ManagedClusterSetBinding", "ConfigMap":
		return true
	}
	return false
}

// joins reports whether o is described by a cluster that joins rather than
// applied: the example's ManagedClusters.
func joins(o *unstructured.Unstructured) bool { return o.GetKind() == "ManagedCluster" }

// applyFleet applies the rest of the rendered objects.
func (d *demo) applyFleet(ctx context.Context) error {
	var fleet []*unstructured.Unstructured
	for _, o := range d.rendered {
		if !inInventory(o) && !joins(o) {
			fleet = append(fleet, o)
		}
	}
	// The placement webhook admits governed resources once its engine has
	// loaded; retry briefly while the hub starts.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := localplane.Apply(ctx, d.hub.Client, fleet)
		if err == nil {
			fmt.Fprintf(d.out, "    %d objects applied\n", len(fleet))
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// setUpHub applies the inventory and the add-on on the hub and starts
// fleetpolicy's hub controller.
func (d *demo) setUpHub(ctx context.Context) error {
	step(d.out, "registering the cluster sets and the placement policy on the hub")
	if err := d.applyInventory(ctx); err != nil {
		return err
	}
	step(d.out, "applying %s on the hub: the fleetpolicy add-on, installed by Placement on every cluster of the global set", addonFleetwide)
	if err := d.applyAddOn(ctx); err != nil {
		return err
	}
	step(d.out, "starting the hub controller (placement webhook on; it grants each cluster's add-on its hub permissions)")
	return d.startHub(ctx)
}

// startHub starts fleetpolicy's hub controller with its placement webhook.
func (d *demo) startHub(ctx context.Context) error {
	ho := hub.DefaultManagerOptions()
	ho.MetricsAddr, ho.ProbeAddr = "0", "0"
	ho.StatusBatchDelay = 200 * time.Millisecond
	ho.WebhookHost, ho.WebhookPort, ho.WebhookCertDir = d.hub.WebhookHost, d.hub.WebhookPort, d.hub.WebhookCertDir
	hubMgr, err := hub.NewManager(ctx, d.hub.Config, ho)
	if err != nil {
		return err
	}
	d.launch(ctx, "hub controller", hubMgr)
	return nil
}

// startSpoke starts cluster's spoke agent with hubCfg, the hub identity OCM
// registration issued to the cluster's add-on (a client certificate, which
// OCM rotates and client-go reads again from its files; as the add-on's
// Deployment runs it, with --hub-token-lifetime=0).
func (d *demo) startSpoke(ctx context.Context, cluster string, hubCfg *rest.Config) error {
	so := spoke.DefaultManagerOptions()
	so.MetricsAddr, so.ProbeAddr = "0", "0"
	so.ClusterName = cluster
	spokeMgr, err := spoke.NewManager(ctx, hubCfg, d.spokes[cluster].Config, so)
	if err != nil {
		return fmt.Errorf("the spoke of %s: %w", cluster, err)
	}
	d.launch(ctx, "spoke agent "+cluster, spokeMgr)
	return nil
}

// launch starts a manager and records how to stop it.
func (d *demo) launch(ctx context.Context, name string, mgr interface{ Start(context.Context) error }) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(d.out, "    %s stopped: %v\n", name, err)
		}
	}()
	d.stops = append(d.stops, func() { cancel(); <-done })
}

// objectKey is a small helper for reading objects by namespace and name.
func objectKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// startConsole serves the console on addr (any free loopback port when addr
// is taken) with the hub's kubeconfig identity until the demo stops, and
// returns its URL.
func (d *demo) startConsole(addr string) (string, error) {
	opts := console.DefaultOptions()
	opts.Config, opts.Scheme = d.hub.Config, scheme.New()
	srv, err := console.New(opts)
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithCancel(d.ctx)
	go srv.Run(ctx)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	d.stops = append(d.stops, func() {
		cancel()
		shutdown, done := context.WithTimeout(context.Background(), 2*time.Second)
		defer done()
		_ = hs.Shutdown(shutdown)
	})
	return "http://" + ln.Addr().String() + "/", nil
}
