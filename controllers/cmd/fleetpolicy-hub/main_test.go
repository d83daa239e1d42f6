package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestHubStartsOutOfCluster runs bin/fleetpolicy-hub (make build) as the README
// gives it, `--kubeconfig <hub>` and nothing else but free ports, against a
// local API server, with no webhook certificate anywhere: it must stay up,
// become ready, say that its webhook serves a self-signed certificate, serve
// TLS on the webhook port, and propagate a policy.
func TestHubStartsOutOfCluster(t *testing.T) {
	plane, err := localplane.Start("hub")
	testkit.FatalOrSkip(t, "starting the hub API server", err)
	t.Cleanup(func() { _ = plane.Stop() })

	free := func() string {
		t.Helper()
		addr, err := localplane.FreeAddress()
		if err != nil {
			t.Fatal(err)
		}
		return addr
	}
	probe, metrics, webhookAddr := free(), free(), free()
	_, webhookPort, _ := net.SplitHostPort(webhookAddr)
	// A TMPDIR of its own: controller-runtime's default certificate folder
	// ($TMPDIR/k8s-webhook-server/serving-certs) does not exist there.
	tmp := t.TempDir()
	hub, err := localplane.StartProcess("fleetpolicy-hub", "build", []string{
		"--kubeconfig", plane.KubeconfigPath,
		"--health-probe-bind-address", probe, "--metrics-bind-address", metrics, "--webhook-port", webhookPort,
	}, []string{"TMPDIR=" + tmp, "KUBERNETES_SERVICE_HOST="}) // out of a cluster even when the test runs in a pod
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Stop)

	testkit.Eventually(t, time.Minute, "the hub is not ready", func() string {
		select {
		case <-hub.Exited():
			t.Fatalf("the hub exited:\n%s", hub.LogTail(30))
		default:
		}
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.Status
		}
		return ""
	})
	if log := hub.Log(); !strings.Contains(log, "self-signed") || !strings.Contains(log, "no API server trusts") {
		t.Errorf("the hub does not say that its webhook certificate is self-signed:\n%s", log)
	}
	certs, _ := filepath.Glob(filepath.Join(tmp, "*", "tls.crt"))
	if len(certs) != 1 {
		t.Errorf("want one generated tls.crt under TMPDIR, found %v", certs)
	}
	conn, err := tls.Dial("tcp", "127.0.0.1:"+webhookPort, &tls.Config{InsecureSkipVerify: true}) // #nosec G402 -- the test only checks that TLS is served
	if err != nil {
		t.Errorf("the webhook port serves no TLS: %v", err)
	} else {
		conn.Close()
	}

	ctx := context.Background()
	if err := localplane.EnsureCluster(ctx, plane.Client, "cluster-1"); err != nil {
		t.Fatal(err)
	}
	if err := localplane.EnsureNamespace(ctx, plane.Client, "policies"); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, plane.Client, `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: p, namespace: policies}
spec:
  disabled: false
  remediationAction: inform
  policy-templates: []
`+"---"+testkit.PlacementRuleBinding("policies", "to-cluster-1", []string{"cluster-1"}, "p"))
	testkit.Eventually(t, time.Minute, "no replica in cluster-1", func() string {
		var replica policyv1.Policy
		if err := plane.Client.Get(ctx, types.NamespacedName{Namespace: "cluster-1", Name: "policies.p"}, &replica); err != nil {
			return err.Error() + "\n" + hub.LogTail(10)
		}
		return ""
	})
	select {
	case <-hub.Exited():
		t.Fatalf("the hub exited:\n%s", hub.LogTail(30))
	default:
	}
}

// TestCheckFlags: every count or duration the hub could only misread is
// refused, naming the flag; the defaults and the documented zeroes pass.
func TestCheckFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *hub.ManagerOptions)
		want string // "" passes
	}{
		{"defaults", func(*hub.ManagerOptions) {}, ""},
		{"no hub-wide bound (0)", func(o *hub.ManagerOptions) { o.ReplicaWritesInFlight = 0 }, ""},
		{"no batch delay (0)", func(o *hub.ManagerOptions) { o.StatusBatchDelay = 0 }, ""},
		{"negative hub-wide bound", func(o *hub.ManagerOptions) { o.ReplicaWritesInFlight = -1 }, "--replica-writes-in-flight must be at least 0, not -1"},
		{"no root workers", func(o *hub.ManagerOptions) { o.RootConcurrency = 0 }, "--root-concurrency must be at least 1, not 0"},
		{"no replica writers", func(o *hub.ManagerOptions) { o.ReplicaWriters = -3 }, "--replica-writers must be at least 1, not -3"},
		{"no explain slots", func(o *hub.ManagerOptions) { o.ExplainConcurrency = 0 }, "--explain-concurrency must be at least 1, not 0"},
		{"negative batch delay", func(o *hub.ManagerOptions) { o.StatusBatchDelay = -time.Second }, "--status-batch-delay must not be negative, not -1s"},
		{"client-go's default burst (0)", func(o *hub.ManagerOptions) { o.Burst = 0 }, ""},
		{"negative burst", func(o *hub.ManagerOptions) { o.Burst = -1 }, "--kube-api-burst must be at least 0, not -1"},
		{"no placement time", func(o *hub.ManagerOptions) { o.PlacementTimeout = 0 }, "--placement-timeout must be positive, not 0s"},
		{"no template time", func(o *hub.ManagerOptions) { o.TemplateLimits.Timeout = 0 }, "--template-timeout must be positive, not 0s"},
		{"no template memory", func(o *hub.ManagerOptions) { o.TemplateLimits.Memory = -1 }, "--template-memory must be a positive quantity"},
		{"no template resolutions", func(o *hub.ManagerOptions) { o.TemplateResolutions = 0 }, "--template-resolutions must be at least 1, not 0"},
		{"pprof on IPv4 loopback", func(o *hub.ManagerOptions) { o.PprofAddr = "127.0.0.1:6060" }, ""},
		{"pprof on IPv6 loopback", func(o *hub.ManagerOptions) { o.PprofAddr = "[::1]:6060" }, ""},
		{"pprof on localhost", func(o *hub.ManagerOptions) { o.PprofAddr = "localhost:6060" }, ""},
		{"pprof off (0)", func(o *hub.ManagerOptions) { o.PprofAddr = "0" }, ""},
		{"pprof on every interface", func(o *hub.ManagerOptions) { o.PprofAddr = ":6060" }, "--pprof-bind-address must be a loopback host:port"},
		{"pprof on a routable address", func(o *hub.ManagerOptions) { o.PprofAddr = "10.0.0.1:6060" }, "--pprof-bind-address must be a loopback host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := hub.DefaultManagerOptions()
			tc.set(&o)
			err := checkFlags(o)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	o := hub.DefaultManagerOptions()
	o.RootConcurrency, o.ReplicaWritesInFlight = 0, -2
	if err := checkFlags(o); err == nil || !strings.Contains(err.Error(), "--root-concurrency") || !strings.Contains(err.Error(), "--replica-writes-in-flight") {
		t.Fatalf("two bad flags: got %v, want both named", err)
	}
}

// TestHubRefusesBadFlag runs bin/fleetpolicy-hub with a negative
// --replica-writes-in-flight: it must exit at once with code 2 and name the
// flag, before it looks for a kubeconfig.
func TestHubRefusesBadFlag(t *testing.T) {
	hubProcess, err := localplane.StartProcess("fleetpolicy-hub", "build", []string{"--replica-writes-in-flight=-1"}, []string{"KUBECONFIG=/nonexistent"})
	testkit.FatalOrSkip(t, "starting the hub", err)
	t.Cleanup(hubProcess.Stop)
	select {
	case <-hubProcess.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("the hub kept running with --replica-writes-in-flight=-1")
	}
	if code := hubProcess.ExitCode(); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if log := hubProcess.Log(); !strings.Contains(log, "--replica-writes-in-flight must be at least 0, not -1") {
		t.Errorf("the hub did not name the flag:\n%s", log)
	}
}
