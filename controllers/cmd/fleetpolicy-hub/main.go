// Command fleetpolicy-hub is the hub controller: it propagates root policies to
// the namespaces of the clusters their PlacementBindings select, with selective
// enforcement, and keeps root and PolicySet status.
//
// Client limits: --kube-api-qps 1000 and --kube-api-burst 3000 by default. The
// burst lets a 3,000-cluster propagation go out at the speed of the API server,
// so the client-side limit is not what paces a rollout; the sustained QPS still
// stops a runaway loop from flooding the server. The API server's own priority
// and fairness is the primary protection. Replica writes in flight are bounded
// per root policy by --replica-writers and across all of them by
// --replica-writes-in-flight. A count or duration no hub could use (a negative
// bound, no workers) is refused at startup with exit code 2, naming the flag.
//
// Out of cluster, with no --webhook-cert-dir and no certificate in
// controller-runtime's default folder, the placement webhook and /explain are
// served with a self-signed certificate generated into a temporary folder (and
// removed on exit), and the hub says so in a warning: no API server trusts that
// certificate, so nothing is admitted through the webhook until it is given one
// that its webhook configuration's caBundle names (manifests/hub does that in
// cluster). --placement=false serves neither.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/commandline"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
)

// defaultGCPercent trades a little CPU for memory: in a paired run of the
// 3,000-cluster benchmark, Go's default of 100 peaked at 88 MiB of RSS and 60 at
// 78 MiB for the same CPU; across runs the peak still varies (docs/performance.md).
// GOGC, when set, wins.
const defaultGCPercent = 60

// checkFlags refuses the counts and durations a flag takes but the hub could
// only misread: a negative bound is not "no bound", a zero number of workers is
// not a default. Each error names the flag.
func checkFlags(o hub.ManagerOptions) error {
	var bad []string
	atLeast := func(name string, v, least int) {
		if v < least {
			bad = append(bad, fmt.Sprintf("--%s must be at least %d, not %d", name, least, v))
		}
	}
	atLeast("root-concurrency", o.RootConcurrency, 1)
	atLeast("replica-writers", o.ReplicaWriters, 1)
	atLeast("replica-writes-in-flight", o.ReplicaWritesInFlight, 0)
	atLeast("explain-concurrency", o.ExplainConcurrency, 1)
	atLeast("kube-api-burst", o.Burst, 0) // 0: client-go's default; below it every request fails
	if o.StatusBatchDelay < 0 {
		bad = append(bad, fmt.Sprintf("--status-batch-delay must not be negative, not %s", o.StatusBatchDelay))
	}
	if o.TemplateLimits.Timeout <= 0 {
		bad = append(bad, fmt.Sprintf("--template-timeout must be positive, not %s", o.TemplateLimits.Timeout))
	}
	if o.TemplateLimits.Memory <= 0 {
		bad = append(bad, "--template-memory must be a positive quantity such as 4Mi")
	}
	atLeast("template-resolutions", o.TemplateResolutions, 1)
	if o.PlacementTimeout <= 0 {
		bad = append(bad, fmt.Sprintf("--placement-timeout must be positive, not %s", o.PlacementTimeout))
	}
	if !loopbackOrOff(o.PprofAddr) {
		bad = append(bad, fmt.Sprintf("--pprof-bind-address must be a loopback host:port such as 127.0.0.1:6060, or empty, not %q", o.PprofAddr))
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// loopbackOrOff says whether addr serves pprof to this machine alone ("127.0.0.1:6060",
// "[::1]:6060", "localhost:6060") or not at all ("" or "0"): a profile shows
// memory, and nothing guards the endpoint.
func loopbackOrOff(addr string) bool {
	return addr == "" || addr == "0" || commandline.Loopback(addr)
}

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	o := hub.DefaultManagerOptions()
	var qps float64
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address the Prometheus metrics endpoint binds to (0 disables it)")
	flag.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve metrics over HTTPS to callers whose token may GET /metrics; false: plain HTTP to anyone, for local use only")
	flag.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "folder with tls.crt and tls.key for the metrics server (default: a self-signed certificate)")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address the /healthz and /readyz probes bind to")
	flag.BoolVar(&o.LeaderElect, "leader-elect", false, "elect a leader so that only one of several hub processes acts")
	flag.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election lease (default: the in-cluster namespace)")
	flag.IntVar(&o.RootConcurrency, "root-concurrency", o.RootConcurrency, "root policies reconciled at once")
	flag.IntVar(&o.ReplicaWriters, "replica-writers", o.ReplicaWriters, "replica writes in flight per root policy")
	flag.IntVar(&o.ReplicaWritesInFlight, "replica-writes-in-flight", o.ReplicaWritesInFlight, "replica writes in flight across all root policies (0: root-concurrency × replica-writers)")
	flag.DurationVar(&o.StatusBatchDelay, "status-batch-delay", o.StatusBatchDelay, "how long replica status changes are gathered before a root status update")
	flag.Float64Var(&qps, "kube-api-qps", float64(o.QPS), "client-side sustained requests per second to the hub API server")
	flag.IntVar(&o.Burst, "kube-api-burst", o.Burst, "client-side request burst to the hub API server")
	flag.BoolVar(&o.Placement, "placement", o.Placement, "serve policy-based placement: the admission webhook, /explain and the remediator")
	flag.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "port of the placement webhook, and of /explain unless --explain-bind-address is set (TLS)")
	flag.StringVar(&o.ExplainAddr, "explain-bind-address", "", "host:port /explain binds to apart from the webhook (TLS, the webhook's certificate); empty: the webhook port; 0: not served")
	flag.IntVar(&o.ExplainConcurrency, "explain-concurrency", o.ExplainConcurrency, "/explain evaluations in flight; beyond it /explain answers 429")
	flag.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "", "folder with tls.crt and tls.key for the placement webhook and /explain (default: $TMPDIR/k8s-webhook-server/serving-certs when it holds them, otherwise a self-signed certificate generated at startup, which no API server trusts: for local use only)")
	flag.StringVar(&o.Identity, "identity", "", "username the hub writes replicas as, which the webhook trusts to write them (default: asked of the API server)")
	flag.BoolVar(&o.SchedulePlacementRules, "schedule-placementrules", o.SchedulePlacementRules, "write PlacementRules' status.decisions from their spec, as OCM's PlacementRule controller does (false on a hub where that controller runs)")
	flag.BoolVar(&o.OpenReports, "openreports", o.OpenReports, "write an OpenReports Report (openreports.io/v1alpha1) in each cluster namespace, one result per policy, for Policy Reporter; only when the API server serves that API (install OpenReports' CRD)")
	flag.DurationVar(&o.PlacementTimeout, "placement-timeout", o.PlacementTimeout, "time bound of one placement evaluation")
	flag.DurationVar(&o.TemplateLimits.Timeout, "template-timeout", o.TemplateLimits.Timeout, "time bound of resolving one replica's hub templates; past it the resolution stops, is reported on the root and is tried again after a backoff")
	templateMemory := flag.String("template-memory", resource.NewQuantity(o.TemplateLimits.Memory, resource.BinarySI).String(), "memory bound of resolving one replica's hub templates (what its functions make and print), as a quantity such as 4Mi")
	flag.IntVar(&o.TemplateResolutions, "template-resolutions", o.TemplateResolutions, "hub template resolutions run at once, hub-wide")
	keyRotationDays := flag.Uint("encryption-key-rotation", 30, "days between rotations of each cluster's policy-encryption-key (OCM's flag)")
	flag.StringVar(&o.PprofAddr, "pprof-bind-address", "", "loopback host:port Go's /debug/pprof handlers bind to, for heap and CPU profiles (empty: none)")
	cpuProfile := flag.String("cpu-profile", "", "write a CPU profile of the whole run to this file (for benchmarks)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if q, err := resource.ParseQuantity(*templateMemory); err == nil {
		o.TemplateLimits.Memory = q.Value()
	} else {
		o.TemplateLimits.Memory = -1
	}
	if err := checkFlags(o); err != nil {
		fmt.Fprintln(os.Stderr, "fleetpolicy-hub:", err)
		os.Exit(2) // as the flag package does for a flag it cannot parse
	}
	o.QPS = float32(qps)
	o.KeyRotation = time.Duration(*keyRotationDays) * 24 * time.Hour
	ctrl.SetLogger(logging.Bounded(zap.New(zap.UseFlagOptions(&zapOpts))))
	logging.WithoutTemplateText(os.Stderr)
	logger := ctrl.Log.WithName("fleetpolicy-hub")

	cfg, err := ctrl.GetConfig() // --kubeconfig, $KUBECONFIG or in-cluster
	if err != nil {
		logger.Error(err, "no kubeconfig for the hub")
		os.Exit(1)
	}
	stopCPUProfile, err := commandline.StartCPUProfile(*cpuProfile)
	if err != nil {
		logger.Error(err, "cpu profile")
		os.Exit(1)
	}
	defer stopCPUProfile()
	removeGenerated := func() {}
	if o.Placement && o.WebhookCertDir == "" {
		// The variable every pod of a cluster has (rest.InClusterConfig reads it).
		dir, generated, err := localWebhookCertDir(os.Getenv("KUBERNETES_SERVICE_HOST") != "")
		if err != nil {
			logger.Error(err, "no webhook certificate")
			os.Exit(1)
		}
		if generated {
			removeGenerated = func() { _ = os.RemoveAll(dir) }
			logger.Info("WARNING: no --webhook-cert-dir and no certificate in "+controllerRuntimeCertDir()+
				": the placement webhook and /explain serve a self-signed certificate that no API server trusts (for local use only); "+
				"give --webhook-cert-dir a certificate that the webhook configuration's caBundle names, or run with --placement=false",
				"certDir", dir)
		}
		o.WebhookCertDir = dir
	}
	ctx := ctrl.SetupSignalHandler()
	mgr, err := hub.NewManager(ctx, cfg, o)
	if err == nil {
		err = mgr.Start(ctx)
	}
	if err != nil {
		logger.Error(err, "hub controller stopped")
		stopCPUProfile()
		removeGenerated()
		os.Exit(1)
	}
	removeGenerated()
}
