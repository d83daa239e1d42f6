package spokebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/complianceevents"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

const (
	cluster     = "bench-cluster"
	chains      = 100
	chainLength = 5 // chains * chainLength = 500 policies
	dataNS      = "bench-data"
)

// rootPolicy is policy number level of chain c in root namespace ns: one
// enforced ConfigurationPolicy creating a ConfigMap, waiting for the policy one
// level up its chain to be Compliant.
func rootPolicy(ns string, c, level int) *policyv1.Policy {
	name := fmt.Sprintf("c%03d-l%d", c, level)
	p := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: fmt.Appendf(nil,
			`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"%[1]s-%[2]s"},`+
				`"spec":{"remediationAction":"enforce","object-templates":[{"complianceType":"musthave","objectDefinition":`+
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%[1]s-%[2]s","namespace":"%[3]s"},"data":{"level":"%[4]d"}}}]}}`,
			ns, name, dataNS, level)}}}},
	}
	if level > 0 {
		p.Spec.Dependencies = []policyv1.PolicyDependency{{
			APIVersion: policyv1.GroupVersion.String(), Kind: "Policy", Name: fmt.Sprintf("c%03d-l%d", c, level-1), Compliance: policyv1.Compliant,
		}}
	}
	return p
}

// replicas are the hub's replicas of the benchmark's policies in root namespace ns.
func replicas(ns string) []*policyv1.Policy {
	out := make([]*policyv1.Policy, 0, chains*chainLength)
	for level := range chainLength {
		for c := range chains {
			out = append(out, replication.Build(rootPolicy(ns, c, level), cluster, policyv1.Enforce, nil))
		}
	}
	return out
}

// BenchmarkSpokeTemplateSync measures one spoke, bin/fleetpolicy-spoke running
// as a child process, syncing 500 policies in 100 chains of 5 (each waiting for
// the one before it to be Compliant): from the creation of the replicas on the
// hub until a watch of the hub has seen all 500 report Compliant (a watch, not
// a List of the 500 every 50 ms, which took the API servers' CPU that the
// spoke's requests need on a 2-core machine). Its floor (writeFloor) writes,
// with as many concurrent writers as the spoke reconciles policies, the same
// replicas on the hub and what the spoke writes for them, in no particular
// order, under the same client-side limits as the spoke:
//
//   - limits=none: the spoke started with no client-side rate limit
//     (--hub-kube-api-qps=-1 --kube-api-qps=-1), the floor without one: the
//     spoke's own work against the least work that gives the same result;
//   - limits=default: the spoke with its defaults, the floor's writes held to
//     the same limits (spoke.DefaultHubQPS and DefaultHubBurst towards the
//     hub, the spoke's QPS and Burst towards the managed cluster, per kind of
//     object as client-go counts them): what a user sees, against the least
//     time those limits allow.
//
// One result line per run of each sub-benchmark (each starts its own spoke):
// the sync time in s, the floor in floor-s, their ratio in x-floor (each
// averaged over b.N, so run it with -benchtime 1x and take medians over -count
// runs), and the spoke process's peak RSS over its whole life (start, cache
// sync, the syncs, the removal of the policies) in MiB-peak-rss.
func BenchmarkSpokeTemplateSync(b *testing.B) {
	name := fmt.Sprintf("policies=%d", chains*chainLength)
	b.Run(name+"/limits=none", func(b *testing.B) { benchmarkTemplateSync(b, false) })
	b.Run(name+"/limits=default", func(b *testing.B) { benchmarkTemplateSync(b, true) })
}

// benchmarkTemplateSync measures the spoke against its floor, both without
// client-side rate limits or both with the spoke's default ones.
func benchmarkTemplateSync(b *testing.B, defaultLimits bool) {
	ctrl.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	fleet := testkit.StartFleet(b, 1)
	hub, managed := unlimited(b, fleet.Hub), unlimited(b, fleet.Spokes[0])
	var floorHub, floorManaged client.Client = hub, managed
	spokeLimits := []string{"--hub-kube-api-qps=-1", "--kube-api-qps=-1"}
	if defaultLimits {
		o := spoke.DefaultManagerOptions()
		floorHub = limitedTo(b, fleet.Hub, o.HubQPS, o.HubBurst)
		floorManaged = limitedTo(b, fleet.Spokes[0], o.QPS, o.Burst)
		spokeLimits = nil
	}
	for _, step := range []func() error{
		func() error { return localplane.EnsureCluster(b.Context(), hub, cluster) },
		func() error { return localplane.EnsureNamespace(b.Context(), managed, dataNS) },
	} {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	sp, ctx, err := startSpoke(b.Context(), fleet, filepath.Join(b.TempDir(), "spoke.log"), spokeLimits...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = sp.stop() })
	fatal := func(err error) {
		b.Helper()
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		b.Fatalf("%v\n%s", err, sp.logTail())
	}
	writers := spoke.DefaultManagerOptions().Concurrency // what the spoke binary reconciles at once

	var spokeTime, floorTime time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		ns := fmt.Sprintf("bench-%d", i)
		want := replicas(ns)
		floor, err := writeFloor(ctx, hub, floorHub, floorManaged, fmt.Sprintf("floor-%d", i), want, writers)
		if err != nil {
			fatal(err)
		}
		floorTime += floor
		b.StartTimer()

		compliant, err := watchCompliant(ctx, hub, cluster, len(want))
		if err != nil {
			fatal(err)
		}
		start := time.Now()
		if err := localplane.Parallel(len(want), writers, func(j int) error { return hub.Create(ctx, want[j].DeepCopy()) }); err != nil {
			fatal(err)
		}
		select {
		case <-compliant:
		case <-time.After(10 * time.Minute):
			fatal(errors.New("not every replica Compliant after 10m"))
		}
		spokeTime += time.Since(start)

		b.StopTimer()
		if err := cleanUp(ctx, hub, managed, want); err != nil {
			fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	peakRSS, err := sp.stop()
	if err != nil {
		fatal(err)
	}
	b.ReportMetric(spokeTime.Seconds()/float64(b.N), "s")
	b.ReportMetric(floorTime.Seconds()/float64(b.N), "floor-s")
	b.ReportMetric(float64(spokeTime)/float64(floorTime), "x-floor")
	b.ReportMetric(peakRSS, "MiB-peak-rss")
}

// spokeProcess is bin/fleetpolicy-spoke running as a child process against the
// benchmark's hub and managed cluster, so that its memory is its own.
type spokeProcess struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has exited and cmd.ProcessState is set
}

// startSpoke starts bin/fleetpolicy-spoke (built by `make build`) for the
// fleet's first spoke with its default options, its output in logPath. The
// context it returns is ctx, cancelled when the process exits, so that nothing
// waits for a spoke that died.
func startSpoke(ctx context.Context, fleet *localplane.Fleet, logPath string, extra ...string) (*spokeProcess, context.Context, error) {
	return startSpokeWith(ctx, fleet.Hub.KubeconfigPath, fleet.Spokes[0].KubeconfigPath, cluster, logPath, append(extra, strings.Fields(*spokeArgs)...)...)
}

// startSpokeWith is startSpoke for the hub and managed cluster of the two
// kubeconfig files and the cluster clusterName, with extra flags.
func startSpokeWith(ctx context.Context, hubKubeconfig, managedKubeconfig, clusterName, logPath string, extra ...string) (*spokeProcess, context.Context, error) {
	root, err := localplane.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	bin := filepath.Join(root, "bin", "fleetpolicy-spoke")
	if _, err := os.Stat(bin); err != nil {
		return nil, nil, fmt.Errorf("%s: run `make build` first", bin)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	args := append([]string{"--hub-kubeconfig", hubKubeconfig, "--kubeconfig", managedKubeconfig,
		"--cluster-name", clusterName, "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--zap-log-level", "error"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	p := &spokeProcess{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logFile.Close()
		cancel(fmt.Errorf("the spoke process exited: %v", err))
		close(p.exited)
	}()
	return p, ctx, nil
}

// stop ends the spoke with SIGTERM and returns its peak RSS in MiB over its
// whole life (localplane.PeakRSS, read just before, as fleetpolicy-bench
// measures the hub). It may be called again; a spoke that has already exited
// gives an error.
func (p *spokeProcess) stop() (float64, error) {
	peak, err := localplane.PeakRSS(p.cmd.Process.Pid)
	_ = p.cmd.Process.Signal(syscall.SIGTERM) // fails only when it has exited already
	<-p.exited
	if err != nil {
		return 0, fmt.Errorf("the spoke's peak RSS: %w", err)
	}
	return float64(peak) / (1 << 20), nil
}

// logTail is the end of the spoke's output, for failure messages.
func (p *spokeProcess) logTail() string {
	const tailBytes = 4 << 10
	out, err := os.ReadFile(p.logPath)
	if err != nil {
		return "spoke log: " + err.Error()
	}
	if len(out) > tailBytes {
		out = out[len(out)-tailBytes:]
	}
	return "spoke log (" + p.logPath + ", end):\n" + string(out)
}

// limitedTo is an admin client of the plane whose requests client-go holds to
// qps a second, in bursts of burst, per kind of object (one limiter per REST
// client, as the spoke's clients are held).
func limitedTo(b *testing.B, p *localplane.Plane, qps float32, burst int) client.Client {
	cfg := rest.CopyConfig(p.Config)
	cfg.RateLimiter, cfg.QPS, cfg.Burst = nil, qps, burst
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// unlimited is an admin client of the plane without a client-side rate limit.
func unlimited(b *testing.B, p *localplane.Plane) client.WithWatch {
	cfg := rest.CopyConfig(p.Config)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// writeFloor writes directly what the spoke writes for the replicas want, into
// namespace ns of both clusters (which the spoke does not watch), and returns
// how long it took: each policy's copy, its ConfigurationPolicy and ConfigMap
// on the managed cluster, the two compliance events of the ConfigMap's
// creation ("not found", then "created", about the copy: the history OCM
// records and status sync reads), the ConfigurationPolicy's status, the copy's
// status with that history, and on the hub the replica's status and the copy
// of the "created" event. hub creates the replicas, as the benchmark does for
// the spoke; spokeHub and spokeManaged write what the spoke writes.
func writeFloor(ctx context.Context, hub, spokeHub, spokeManaged client.Client, ns string, want []*policyv1.Policy, writers int) (time.Duration, error) {
	for _, c := range []client.Client{hub, spokeManaged} {
		if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	err := localplane.Parallel(len(want), writers, func(j int) error {
		replica := want[j].DeepCopy()
		replica.Namespace = ns
		copied := replica.DeepCopy()
		if err := hub.Create(ctx, replica); err != nil {
			return err
		}
		if err := spokeManaged.Create(ctx, copied); err != nil {
			return err
		}
		cp := &policyv1.ConfigurationPolicy{}
		if err := json.Unmarshal(want[j].Spec.PolicyTemplates[0].ObjectDefinition.Raw, cp); err != nil {
			return err
		}
		cp.Namespace = ns
		if err := spokeManaged.Create(ctx, cp); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cp.Name}, Data: map[string]string{"level": "0"}}
		event := complianceevents.Event{
			Involved: corev1.ObjectReference{APIVersion: policyv1.GroupVersion.String(), Kind: "Policy", Namespace: ns, Name: copied.Name, UID: copied.UID},
			Reason:   history.Reason(ns, cp.Name),
		}
		var entries []policyv1.ComplianceHistory
		record := func(message string) error {
			event.Message = message
			name, at, err := complianceevents.Write(ctx, spokeManaged, event, time.Now())
			entries = history.Prepend(entries, history.Entry(name, message, at))
			return err
		}
		if err := record(fmt.Sprintf("NonCompliant; violation - configmaps [%s] not found in namespace %s", cm.Name, ns)); err != nil {
			return err
		}
		if err := spokeManaged.Create(ctx, cm); err != nil {
			return err
		}
		if err := record(fmt.Sprintf("Compliant; notification - configmaps [%s] was created successfully in namespace %s", cm.Name, ns)); err != nil {
			return err
		}
		cp.Status = policyv1.ConfigurationPolicyStatus{ComplianceState: policyv1.Compliant, LastEvaluatedGeneration: cp.Generation}
		if err := spokeManaged.Status().Update(ctx, cp); err != nil {
			return err
		}
		status := policyv1.PolicyStatus{ComplianceState: policyv1.Compliant, Details: []*policyv1.DetailsPerTemplate{{
			TemplateMeta: metav1.ObjectMeta{Name: cp.Name, Namespace: ns}, ComplianceState: policyv1.Compliant, History: entries,
		}}}
		copied.Status, replica.Status = status, status
		if err := spokeManaged.Status().Update(ctx, copied); err != nil {
			return err
		}
		event.Involved.UID = replica.UID
		if err := complianceevents.Create(ctx, spokeHub, event, entries[0].EventName, entries[0].LastTimestamp.Time); err != nil {
			return err
		}
		return spokeHub.Status().Update(ctx, replica)
	})
	return time.Since(start), err
}

// cleanUp deletes the replicas and waits for the spoke to remove their copies.
func cleanUp(ctx context.Context, hub, managed client.Client, want []*policyv1.Policy) error {
	if err := localplane.Parallel(len(want), 16, func(j int) error { return client.IgnoreNotFound(hub.Delete(ctx, want[j].DeepCopy())) }); err != nil {
		return err
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list := &policyv1.PolicyList{}
		if err := managed.List(ctx, list, client.InNamespace(cluster)); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
	}
	return errors.New("the spoke did not remove the policy copies")
}
