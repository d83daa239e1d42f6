package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// benchAdmission measures the placement webhook: the latency of creating a root
// Policy through the API server while the hub's webhook evaluates the EU/PCI
// example placement policy of examples/placement (Rego, then CEL) over
// `clusters` ManagedClusters, against the floor of the same creates through a
// webhook that allows everything at once.
// Each run measures the floor and both languages and writes, per language, one
// line for the median and one for the p90.
func benchAdmission(ctx context.Context, res *results, root string, clusters, requests, runs int) error {
	raw, err := os.ReadFile(filepath.Join(root, "manifests", "hub", "webhook.yaml"))
	if err != nil {
		return err
	}
	cfg := admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		return err
	}
	plane, err := localplane.StartWith("bench-admission", localplane.Options{
		MutatingWebhooks: []admissionregistrationv1.MutatingWebhookConfiguration{cfg},
	})
	if err != nil {
		return err
	}
	defer plane.Stop()
	c := plane.Client
	if err := localplane.EnsureNamespace(ctx, c, placement.Namespace); err != nil {
		return err
	}
	progress("placement admission: %d ManagedClusters, %d sequential Policy creates per webhook and run", clusters, requests)
	for i := range clusters {
		jurisdiction := "eu"
		if i%2 == 1 {
			jurisdiction = "us"
		}
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cluster-%04d", i), Labels: map[string]string{"jurisdiction": jurisdiction},
		}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if err := c.Create(ctx, mc); err != nil {
			return err
		}
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "pci-compliance-level", Value: fmt.Sprint(i % 4)}}
		if err := c.Status().Update(ctx, mc); err != nil {
			return err
		}
	}

	for r := range runs {
		floor, err := admissionLatencies(ctx, c, fmt.Sprintf("noop-%d", r), requests, func(ctx context.Context) (func(), error) {
			return serveNoop(ctx, plane)
		})
		if err != nil {
			return err
		}
		for _, lang := range []string{"rego", "cel"} {
			policyFile := filepath.Join(root, "examples", "placement", "policy-"+lang+".yaml")
			lat, err := admissionLatencies(ctx, c, fmt.Sprintf("%s-%d", lang, r), requests, func(ctx context.Context) (func(), error) {
				return serveHub(ctx, plane, policyFile)
			})
			if err != nil {
				return err
			}
			name := fmt.Sprintf("HubAdmission/clusters=%d/webhook=%s/", clusters, lang)
			res.line(name+"median", median(lat), withFloor(ms(median(lat)), ms(median(floor)), "ms")...)
			res.line(name+"p90", p90(lat), withFloor(ms(p90(lat)), ms(p90(floor)), "ms")...)
		}
	}
	return nil
}

// admissionLatencies starts a webhook server, creates `requests` Policies that
// ask for EU jurisdiction one after the other, each with annotations of its
// own, and returns each create's latency.
func admissionLatencies(ctx context.Context, c client.Client, name string, requests int,
	serve func(context.Context) (func(), error)) ([]time.Duration, error) {
	stop, err := serve(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	ns := "admission-" + name
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		return nil, err
	}
	var lat []time.Duration
	for i := range requests + 5 { // the first five warm up
		p := &policyv1.Policy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p-%d", i), Annotations: map[string]string{
				"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "2",
				// The policy reads every annotation: one that differs per request
				// keeps the Rego engine from answering from its memo of an
				// earlier request's verdict, so that the figure is evaluation's.
				"bench.fleetpolicy.io/request": strconv.Itoa(i),
			}},
			Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}},
		}
		start := time.Now()
		if err := c.Create(ctx, p); err != nil {
			return nil, fmt.Errorf("%s webhook: %w", name, err)
		}
		if i >= 5 {
			lat = append(lat, time.Since(start))
		}
	}
	return lat, nil
}

// serveNoop serves, at the plane's webhook address, a webhook that allows every
// request unchanged: the floor.
func serveNoop(ctx context.Context, plane *localplane.Plane) (func(), error) {
	srv := webhook.NewServer(webhook.Options{Host: plane.WebhookHost, Port: plane.WebhookPort, CertDir: plane.WebhookCertDir})
	srv.Register(hub.MutatePlacementPath, &webhook.Admission{Handler: admission.HandlerFunc(
		func(context.Context, admission.Request) admission.Response { return admission.Allowed("") })})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Start(ctx) }()
	if err := waitServing(plane); err != nil {
		cancel()
		return nil, err
	}
	return func() { cancel(); <-done }, nil
}

// serveHub runs the hub controller with its placement webhook and the given
// placement policy loaded, and waits until it fails closed (policies loaded).
func serveHub(ctx context.Context, plane *localplane.Plane, policyFile string) (func(), error) {
	c := plane.Client
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(placement.Namespace), client.HasLabels{placement.LanguageLabel}); err != nil {
		return nil, err
	}
	f, err := os.Open(policyFile)
	if err != nil {
		return nil, err
	}
	objs, err := localplane.ReadManifests(policyFile, f)
	f.Close()
	if err != nil {
		return nil, err
	}
	if _, err := localplane.Apply(ctx, c, objs); err != nil {
		return nil, err
	}
	o := hub.DefaultManagerOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.SkipControllerNameValidation = true
	o.WebhookHost, o.WebhookPort, o.WebhookCertDir = plane.WebhookHost, plane.WebhookPort, plane.WebhookCertDir
	ctx, cancel := context.WithCancel(ctx)
	mgr, err := hub.NewManager(ctx, plane.Config, o)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	stop := func() { cancel(); <-done }
	deadline := time.Now().Add(time.Minute)
	for {
		wh := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: hub.PlacementWebhookConfiguration}, wh); err == nil &&
			wh.Webhooks[0].FailurePolicy != nil && *wh.Webhooks[0].FailurePolicy == admissionregistrationv1.Fail {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the hub did not load the placement policy")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return stop, waitServing(plane)
}

func waitServing(plane *localplane.Plane) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := dialTLS(plane)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func p90(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)*9/10]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func dialTLS(plane *localplane.Plane) (*tls.Conn, error) {
	return tls.Dial("tcp", fmt.Sprintf("%s:%d", plane.WebhookHost, plane.WebhookPort), &tls.Config{InsecureSkipVerify: true})
}
