package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hubtoken"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// demo is one run: the planes, the controllers and what was rendered.
type demo struct {
	out      io.Writer
	root     string
	hub      *localplane.Plane
	spokes   map[string]*localplane.Plane
	rendered []*unstructured.Unstructured
	stops    []func()
}

func run(ctx context.Context, out io.Writer, o options) error {
	ctrl.SetLogger(logr.Discard())
	root, err := localplane.RepoRoot()
	if err != nil {
		return err
	}
	d := &demo{out: out, root: root, spokes: map[string]*localplane.Plane{}}
	defer d.stop()

	step(out, "rendering %s with kustomize and the fleetpolicy functions", o.example)
	if err := d.render(ctx, o.example); err != nil {
		return err
	}
	clusters := namesOf(d.rendered, "ManagedCluster")
	if len(clusters) == 0 {
		return fmt.Errorf("%s defines no ManagedCluster", o.example)
	}

	step(out, "starting a hub and %d spoke API servers (%v): kube-apiserver and etcd each", len(clusters), clusters)
	start := time.Now()
	if err := d.startPlanes(clusters); err != nil {
		return err
	}
	step(out, "started in %s", time.Since(start).Round(100*time.Millisecond))

	step(out, "registering the managed clusters and the placement policy on the hub")
	if err := d.applyInventory(ctx); err != nil {
		return err
	}
	step(out, "starting the hub controller (placement webhook on) and a spoke agent per cluster")
	if err := d.startControllers(ctx, clusters); err != nil {
		return err
	}
	step(out, "starting OCM's placement controller on the hub")
	ocm, err := localplane.StartOCMPlacement(ctx, d.hub)
	if err != nil {
		return err
	}
	d.stops = append(d.stops, ocm.Stop)

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
		step(out, "press Ctrl-C to stop")
		<-ctx.Done()
	}
	return nil
}

func (d *demo) stop() {
	if len(d.stops) == 0 && d.hub == nil {
		return
	}
	step(d.out, "stopping the controllers and the API servers")
	for i := len(d.stops) - 1; i >= 0; i-- {
		d.stops[i]()
	}
	for _, p := range d.spokes {
		_ = p.Stop()
	}
	if d.hub != nil {
		_ = d.hub.Stop()
	}
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
	go start("hub", localplane.Options{MutatingWebhooks: []admissionregistrationv1.MutatingWebhookConfiguration{webhook}},
		func(p *localplane.Plane) { d.hub = p })
	for _, c := range clusters {
		go start(c, localplane.Options{}, func(p *localplane.Plane) { d.spokes[c] = p })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// applyInventory applies what must exist before the fleet: namespaces, the
// ManagedClusters (with their claims) and their namespaces on the hub, their
// cluster sets and bindings (so that OCM's placement controller schedules
// each Placement once, on every cluster it may choose), and the placement
// policies.
func (d *demo) applyInventory(ctx context.Context) error {
	if err := localplane.EnsureNamespace(ctx, d.hub.Client, placement.Namespace); err != nil {
		return err
	}
	for _, ns := range namesOf(d.rendered, "ManagedCluster") {
		if err := localplane.EnsureClusterNamespace(ctx, d.hub.Client, ns); err != nil {
			return err
		}
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
// arrives: namespaces, the managed clusters, their cluster sets and the
// namespaces' bindings to them, and ConfigMaps (the placement policies).
func inInventory(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "Namespace", "ManagedCluster", "ManagedClusterSet", "ManagedClusterSetBinding", "ConfigMap":
		return true
	}
	return false
}

// applyFleet applies the rest of the rendered objects.
func (d *demo) applyFleet(ctx context.Context) error {
	var fleet []*unstructured.Unstructured
	for _, o := range d.rendered {
		if !inInventory(o) {
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

func (d *demo) startControllers(ctx context.Context, clusters []string) error {
	ho := hub.DefaultManagerOptions()
	ho.MetricsAddr, ho.ProbeAddr = "0", "0"
	ho.StatusBatchDelay = 200 * time.Millisecond
	ho.WebhookHost, ho.WebhookPort, ho.WebhookCertDir = d.hub.WebhookHost, d.hub.WebhookPort, d.hub.WebhookCertDir
	hubMgr, err := hub.NewManager(ctx, d.hub.Config, ho)
	if err != nil {
		return err
	}
	d.launch(ctx, "hub controller", hubMgr)
	for _, c := range clusters {
		so := spoke.DefaultManagerOptions()
		so.MetricsAddr, so.ProbeAddr = "0", "0"
		so.ClusterName = c
		hubCfg, err := d.spokeHubIdentity(ctx, c)
		if err != nil {
			return fmt.Errorf("the hub identity of spoke %s: %w", c, err)
		}
		spokeMgr, err := spoke.NewManager(ctx, hubCfg, d.spokes[c].Config, so)
		if err != nil {
			return err
		}
		d.launch(ctx, "spoke agent "+c, spokeMgr)
	}
	return nil
}

// spokeHubIdentity gives cluster's spoke the hub identity a real spoke has:
// manifests/spoke/hub's ServiceAccount and RBAC in the cluster's namespace, a
// short bootstrap token, renewed by the spoke as fleetpolicy-spoke renews it
// (package hubtoken) — never the hub's admin credentials.
func (d *demo) spokeHubIdentity(ctx context.Context, cluster string) (*rest.Config, error) {
	raw, err := os.ReadFile(filepath.Join(d.root, "manifests", "spoke", "hub", "rbac.yaml"))
	if err != nil {
		return nil, err
	}
	objs, err := localplane.ReadManifests("manifests/spoke/hub", bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		o.SetNamespace(cluster)
	}
	if err := localplane.EnsureClusterNamespace(ctx, d.hub.Client, cluster); err != nil {
		return nil, err
	}
	if _, err := localplane.Apply(ctx, d.hub.Client, objs); err != nil {
		return nil, err
	}
	admin, err := kubernetes.NewForConfig(d.hub.Config)
	if err != nil {
		return nil, err
	}
	tr, err := admin.CoreV1().ServiceAccounts(cluster).CreateToken(ctx, "fleetpolicy-spoke", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(d.hub.Config)
	cfg.BearerToken = tr.Status.Token
	renewing, _, err := hubtoken.Renewing(ctx, cfg, time.Hour, logr.Discard())
	return renewing, err
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
