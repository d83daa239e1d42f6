package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// The fleet of the issue: 3,000 clusters x 100 policies.
const (
	benchPolicies = 100
	benchClusters = 3000
	benchRequests = 15
)

// BenchmarkConsoleFleetPage serves the fleet page (/, the first page of each
// table) over 100 root policies whose status holds 3,000 clusters each
// (300,000 policy-cluster pairs) on a real API server, through HTTP, after
// the viewer's cache has loaded. Figures: s/page, the median of 15 pages;
// its floor, floor-s/page, is the median of 15 Lists of the same 100 roots
// from the API server with the same identity: what a console that read the
// roots per request would pay before computing or rendering anything (the
// ratio below 1 is the cache's gain); first-page-s, the viewer's first page
// (its cache started and synced); MiB-cache, the Go heap the console holds
// once loaded; B/page, the bytes a page allocates. The API server and its
// fleet are written once per process (about a minute); each run then takes
// about 45 s on a loaded 2-core machine, most of it the 15 floor Lists.
func BenchmarkConsoleFleetPage(b *testing.B) {
	b.Run(fmt.Sprintf("policies=%d/clusters=%d", benchPolicies, benchClusters), benchmarkFleetPage)
}

// benchPlane is the API server of the benchmark and its fleet, written once
// per process (go test -count runs the benchmark again on the same fleet);
// TestMain stops it.
var benchPlane struct {
	once  sync.Once
	plane *localplane.Plane
	cfg   *rest.Config
	err   error
}

func startBenchPlane(ctx context.Context) (*rest.Config, error) {
	benchPlane.once.Do(func() {
		p, err := localplane.Start("hub")
		if err != nil {
			benchPlane.err = err
			return
		}
		benchPlane.plane = p
		cfg := rest.CopyConfig(p.Config)
		cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
		c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		if err == nil {
			err = localplane.EnsureNamespace(ctx, c, "bench")
		}
		if err == nil {
			err = localplane.Parallel(benchPolicies, 4, func(i int) error { return writeBenchRoot(ctx, c, i) })
		}
		benchPlane.cfg, benchPlane.err = cfg, err
	})
	return benchPlane.cfg, benchPlane.err
}

func stopBenchPlane() {
	if benchPlane.plane != nil {
		_ = benchPlane.plane.Stop()
	}
}

func benchmarkFleetPage(b *testing.B) {
	ctx := context.Background()
	cfg, err := startBenchPlane(ctx)
	testkit.FatalOrSkip(b, "starting the benchmark's API server and fleet", err)

	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		opts := console.DefaultOptions()
		opts.Config, opts.Scheme, opts.Refresh = cfg, scheme.New(), 0
		srv, err := console.New(opts)
		if err != nil {
			b.Fatal(err)
		}
		sctx, stop := context.WithCancel(ctx)
		go srv.Run(sctx)
		ts := httptest.NewServer(srv)
		page := func() time.Duration {
			start := time.Now()
			resp, err := http.Get(ts.URL + "/")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("GET /: %s", resp.Status)
			}
			return time.Since(start)
		}
		first := page()
		runtime.GC()
		var loaded runtime.MemStats
		runtime.ReadMemStats(&loaded)
		var pages []time.Duration
		var allocs uint64
		for range benchRequests {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			pages = append(pages, page())
			runtime.ReadMemStats(&m1)
			allocs += m1.TotalAlloc - m0.TotalAlloc
		}
		var floors []time.Duration
		lister, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		if err != nil {
			b.Fatal(err)
		}
		for range benchRequests {
			start := time.Now()
			var list policyv1.PolicyList
			if err := lister.List(ctx, &list, client.InNamespace("bench")); err != nil {
				b.Fatal(err)
			}
			floors = append(floors, time.Since(start))
			if len(list.Items) != benchPolicies {
				b.Fatalf("listed %d roots", len(list.Items))
			}
		}
		ts.Close()
		stop()
		p, f := median(pages), median(floors)
		b.ReportMetric(p.Seconds(), "s/page")
		b.ReportMetric(f.Seconds(), "floor-s/page")
		b.ReportMetric(p.Seconds()/f.Seconds(), "x-floor")
		b.ReportMetric(first.Seconds(), "first-page-s")
		b.ReportMetric(float64(int64(loaded.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MiB-cache")
		b.ReportMetric(float64(allocs)/benchRequests, "B/page")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// writeBenchRoot creates root policy i of the bench fleet with its status:
// every cluster reported, one in 7 NonCompliant, one in 13 Pending.
func writeBenchRoot(ctx context.Context, c client.Client, i int) error {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("policy-%03d", i),
		Annotations: map[string]string{
			"policy.open-cluster-management.io/standards":  "NIST SP 800-53",
			"policy.open-cluster-management.io/categories": fmt.Sprintf("category-%d", i%5),
			"policy.open-cluster-management.io/controls":   fmt.Sprintf("CM-%d", i%10),
		}}}
	p.SetGroupVersionKind(schema.GroupVersionKind{Group: policyv1.GroupVersion.Group, Version: policyv1.GroupVersion.Version, Kind: "Policy"})
	p.Spec.RemediationAction = policyv1.Inform
	p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{}
	if err := c.Create(ctx, p); err != nil {
		return err
	}
	p.Status.ComplianceState = policyv1.Compliant
	for k := range benchClusters {
		state := policyv1.Compliant
		switch {
		case (k+i)%7 == 0:
			state = policyv1.NonCompliant
			p.Status.ComplianceState = policyv1.NonCompliant
		case (k+i)%13 == 0:
			state = policyv1.Pending
		}
		name := fmt.Sprintf("cluster-%04d", k)
		p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: name, ClusterNamespace: name, ComplianceState: state})
	}
	return c.Status().Update(ctx, p)
}
