package spokebench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// peerAfter is how long the minute after convergence is watched.
var peerAfter = flag.Duration("peer-after", time.Minute, "BenchmarkSpokeAgainstOCM: how long each side is watched after convergence (requests and idle CPU)")

// peerProfile, when set, is a file each run appends its request breakdown
// to: per side, API server, window, user agent, verb, resource and code.
var peerProfile = flag.String("peer-profile", "", "BenchmarkSpokeAgainstOCM: append each run's request breakdown to this file")

// spokeArgs are extra flags of fleetpolicy-spoke (space-separated), to
// measure other settings than its defaults or to profile it.
var spokeArgs = flag.String("spoke-args", "", "extra flags of fleetpolicy-spoke, space-separated (e.g. --cpu-profile=/tmp/spoke.pprof)")

// harnessAgent is the user agent of the benchmark's own requests, which the
// request counts leave out.
const harnessAgent = "spokebench-harness"

// peerDataNS holds the ConfigMaps the policies enforce and the one the
// templated policies read.
const peerDataNS = "peer-data"

// BenchmarkSpokeAgainstOCM runs fleetpolicy-spoke and OCM's policy agents
// (the governance-policy-framework add-on and config-policy-controller
// v0.19, bin/ocm-*) one after the other in the same run, each on its own
// managed API server (the same kube-apiserver build) against the same hub API
// server, on the same replicated Policies written straight to the hub: each
// an enforce ConfigurationPolicy making a ConfigMap, with templates=none as
// they are and with templates=fromConfigMap one value of the ConfigMap read
// from another ConfigMap of the managed cluster by a managed-cluster
// template. Both evaluate by watch (their default: no evaluationInterval).
// Which side runs first alternates run by run.
//
// The clock starts when the hub accepts the first replica's create and stops
// when a watch of the hub has seen every replica Compliant. Figures, each
// fleetpolicy's with OCM's as its floor (x-ocm...): time (s), CPU to converge
// (cpu-s: user + system of the agent processes over that span), CPU per
// minute in the -peer-after span after it (idle-cpu-s/min), peak RSS over the
// agents' whole life (MiB-peak-rss; OCM's is the sum of its two processes),
// and the requests each API server took from the agents (their audit logs,
// every request but the benchmark's own and the API server's): to the hub and
// to the managed cluster while converging, and to either in the span after.
func BenchmarkSpokeAgainstOCM(b *testing.B) {
	for _, policies := range []int{200, 1000} {
		for _, tmpl := range []string{"none", "fromConfigMap"} {
			b.Run(fmt.Sprintf("policies=%d/templates=%s", policies, tmpl), func(b *testing.B) {
				for range b.N {
					// -count N calls this function N times, each with b.N = 1.
					runPeers(b, policies, tmpl == "fromConfigMap", peerRuns[b.Name()])
					peerRuns[b.Name()]++
				}
			})
		}
	}
}

// peerRuns counts the runs of each BenchmarkSpokeAgainstOCM scenario so far,
// so that which side goes first alternates run by run.
var peerRuns = map[string]int{}

// sideResult is what one side measured in one run.
type sideResult struct {
	converge, cpu, idleCPU                      time.Duration
	peakRSS                                     float64 // MiB
	hubRequests, managedRequests, afterRequests int
}

func runPeers(b *testing.B, policies int, templated bool, run int) {
	b.StopTimer()
	ctrl.SetLogger(logr.Discard())
	dir := b.TempDir()
	hub := startAuditedPlane(b, "hub", dir)
	sides := []string{"fleetpolicy", "ocm"}
	if run%2 == 1 {
		slices.Reverse(sides)
	}
	results := map[string]sideResult{}
	for _, side := range sides {
		results[side] = runSide(b, hub, dir, side, policies, templated)
	}
	fp, ocm := results["fleetpolicy"], results["ocm"]
	ratio := func(a, b float64) float64 { return a / max(b, 1e-9) }
	b.ReportMetric(fp.converge.Seconds(), "s")
	b.ReportMetric(ocm.converge.Seconds(), "floor-s")
	b.ReportMetric(ratio(fp.converge.Seconds(), ocm.converge.Seconds()), "x-ocm")
	report := func(unit string, fpv, ocmv float64, ratioUnit string) {
		b.ReportMetric(fpv, unit)
		b.ReportMetric(ocmv, "ocm-"+unit)
		b.ReportMetric(ratio(fpv, ocmv), "x-ocm-"+ratioUnit)
	}
	report("cpu-s", fp.cpu.Seconds(), ocm.cpu.Seconds(), "cpu")
	perMinute := peerAfter.Minutes()
	report("idle-cpu-s/min", fp.idleCPU.Seconds()/perMinute, ocm.idleCPU.Seconds()/perMinute, "idle-cpu")
	report("MiB-peak-rss", fp.peakRSS, ocm.peakRSS, "peak-rss")
	report("hub-requests", float64(fp.hubRequests), float64(ocm.hubRequests), "hub-requests")
	report("managed-requests", float64(fp.managedRequests), float64(ocm.managedRequests), "managed-requests")
	report("after-requests", float64(fp.afterRequests), float64(ocm.afterRequests), "after-requests")
}

// auditedPlane is a local API server whose audit log records every request.
type auditedPlane struct {
	*localplane.Plane
	auditLog string
	client   client.WithWatch // the benchmark's, without a rate limit
}

// auditPolicy logs every request once, at its metadata level: a watch when
// it starts, anything else when it is answered (with its code).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  verbs: [watch]
  omitStages: [ResponseStarted, ResponseComplete, Panic]
- level: Metadata
  omitStages: [RequestReceived, ResponseStarted]
`

func startAuditedPlane(b *testing.B, name, dir string) *auditedPlane {
	b.Helper()
	policyPath := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policyPath, []byte(auditPolicy), 0o600); err != nil {
		b.Fatal(err)
	}
	logPath := filepath.Join(dir, name+"-audit.log")
	p, err := localplane.StartWith(name, localplane.Options{APIServerFlags: map[string]string{
		"audit-policy-file": policyPath, "audit-log-path": logPath, "audit-log-maxsize": "0",
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Stop() })
	cfg := rest.CopyConfig(p.Config)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.UserAgent = harnessAgent
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	return &auditedPlane{Plane: p, auditLog: logPath, client: c}
}

// peerPolicy is root policy number i: an enforce ConfigurationPolicy making
// the ConfigMap p<i> in peerDataNS, one of whose values a managed-cluster
// template reads from the ConfigMap source when templated.
func peerPolicy(i int, templated bool) *policyv1.Policy {
	value := fmt.Sprintf("%q", fmt.Sprint(i))
	if templated {
		value = fmt.Sprintf(`"{{ fromConfigMap \"%s\" \"source\" \"value\" }}"`, peerDataNS)
	}
	name := fmt.Sprintf("p%04d", i)
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "peer", Name: name},
		Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: fmt.Appendf(nil,
			`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"%[1]s"},`+
				`"spec":{"remediationAction":"enforce","severity":"low","object-templates":[{"complianceType":"musthave","objectDefinition":`+
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%[1]s","namespace":"%[2]s"},"data":{"value":%[3]s}}}]}}`,
			name, peerDataNS, value)}}}},
	}
}

// agentProcess is one side's agents: their process ids and how to stop them.
type agentProcess struct {
	pids    []int
	probes  []string
	stop    func()
	logTail func() string
}

// runSide runs one side (fleetpolicy or ocm) on a fresh managed API server
// and cluster namespace of hub, and measures it.
func runSide(b *testing.B, hub *auditedPlane, dir, side string, policies int, templated bool) sideResult {
	b.Helper()
	ctx := b.Context()
	clusterName := "peer-" + side
	managed := startAuditedPlane(b, side+"-managed", dir)
	if side == "ocm" {
		installOCMPolicyCRDs(b, managed)
	}
	hubKubeconfig := hubIdentity(b, hub, clusterName, dir)
	for _, ns := range []string{clusterName, peerDataNS} {
		if err := localplane.EnsureNamespace(ctx, managed.client, ns); err != nil {
			b.Fatal(err)
		}
	}
	source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: peerDataNS, Name: "source"}, Data: map[string]string{"value": "from-the-cluster"}}
	if err := managed.client.Create(ctx, source); err != nil {
		b.Fatal(err)
	}

	agents := startAgents(b, side, managed, clusterName, hubKubeconfig, dir)
	defer agents.stop()
	if err := waitReady(ctx, agents.probes, 2*time.Minute); err != nil {
		b.Fatalf("%s: %v\n%s", side, err, agents.logTail())
	}
	// Let the agents finish starting (their caches synced, the first lists
	// answered) so that the span measured is the work of the policies.
	time.Sleep(3 * time.Second)

	want := make([]*policyv1.Policy, policies)
	for i := range want {
		want[i] = replication.Build(peerPolicy(i, templated), clusterName, policyv1.Enforce, nil)
	}
	cpuBefore := cpuOf(b, agents.pids)
	compliant, err := watchCompliant(ctx, hub.client, clusterName, len(want))
	if err != nil {
		b.Fatal(err)
	}
	if err := hub.client.Create(ctx, want[0].DeepCopy()); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	b.StartTimer()
	if err := localplane.Parallel(len(want)-1, 8, func(j int) error { return hub.client.Create(ctx, want[j+1].DeepCopy()) }); err != nil {
		b.Fatal(err)
	}
	timeout := time.Duration(policies) * 600 * time.Millisecond
	select {
	case <-compliant:
	case <-time.After(max(timeout, 2*time.Minute)):
		b.Fatalf("%s: not every replica Compliant after %v\n%s", side, max(timeout, 2*time.Minute), agents.logTail())
	}
	converged := time.Now()
	b.StopTimer()
	if side == "fleetpolicy" {
		// The spoke reports the generation it evaluated (OCM's add-on does
		// not): every replica should carry it once Compliant.
		list := &policyv1.PolicyList{}
		if err := hub.client.List(ctx, list, client.InNamespace(clusterName)); err != nil {
			b.Fatal(err)
		}
		behind := 0
		for _, p := range list.Items {
			if p.Status.ObservedGeneration != p.Generation {
				behind++
			}
		}
		if behind > 0 {
			b.Logf("%s: %d of %d replicas Compliant without their observedGeneration", side, behind, len(list.Items))
		}
	}
	cpuConverged := cpuOf(b, agents.pids)
	time.Sleep(*peerAfter)
	after := time.Now()
	cpuAfter := cpuOf(b, agents.pids)
	var peak float64
	for _, pid := range agents.pids {
		rss, err := localplane.PeakRSS(pid)
		if err != nil {
			b.Fatal(err)
		}
		peak += float64(rss) / (1 << 20)
	}
	agents.stop()

	hubLog := readAudit(b, hub.auditLog)
	managedLog := readAudit(b, managed.auditLog)
	converging := window{start, converged}
	afterwards := window{converged, after}
	r := sideResult{
		converge: converged.Sub(start), cpu: cpuConverged - cpuBefore, idleCPU: cpuAfter - cpuConverged, peakRSS: peak,
		hubRequests:     count(hubLog, converging, clusterName),
		managedRequests: count(managedLog, converging, ""),
		afterRequests:   count(hubLog, afterwards, clusterName) + count(managedLog, afterwards, ""),
	}
	b.Logf("%s %d policies (templated %v): converged in %v, cpu %v, idle cpu %v, peak %.0f MiB, hub %d, managed %d, after %d requests",
		side, policies, templated, r.converge.Round(time.Millisecond), r.cpu, r.idleCPU, r.peakRSS, r.hubRequests, r.managedRequests, r.afterRequests)
	if *peerProfile != "" {
		writeProfile(b, *peerProfile, fmt.Sprintf("%s policies=%d templated=%v", side, policies, templated), map[string][]auditEvent{
			"hub converging": filter(hubLog, converging, clusterName), "hub after": filter(hubLog, afterwards, clusterName),
			"managed converging": filter(managedLog, converging, ""), "managed after": filter(managedLog, afterwards, ""),
		})
	}
	return r
}

// startAgents starts one side's agents against managed and the hub.
func startAgents(b *testing.B, side string, managed *auditedPlane, clusterName, hubKubeconfig, dir string) agentProcess {
	b.Helper()
	if side == "ocm" {
		a, err := localplane.StartOCMPolicyAgents(managed.Plane, clusterName, hubKubeconfig)
		if err != nil {
			b.Fatal(err)
		}
		return agentProcess{
			pids: []int{a.Addon.Pid(), a.Configs.Pid()}, probes: []string{a.AddonProbe, a.ConfigsProbe},
			stop: a.Stop, logTail: func() string { return a.LogTails(clusterName, 20) },
		}
	}
	probe, err := localplane.FreeAddress()
	if err != nil {
		b.Fatal(err)
	}
	sp, _, err := startSpokeWith(b.Context(), hubKubeconfig, managed.KubeconfigPath, clusterName, filepath.Join(dir, "spoke.log"),
		append([]string{"--health-probe-bind-address", probe}, strings.Fields(*spokeArgs)...)...)
	if err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	return agentProcess{
		pids: []int{sp.cmd.Process.Pid}, probes: []string{probe},
		stop: func() { once.Do(func() { _, _ = sp.stop() }) }, logTail: sp.logTail,
	}
}

// waitReady waits until every probe address answers /readyz with 200.
func waitReady(ctx context.Context, probes []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, probe := range probes {
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+probe+"/readyz", nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s/readyz not ready after %v (%v)", probe, timeout, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func cpuOf(b *testing.B, pids []int) time.Duration {
	b.Helper()
	var total time.Duration
	for _, pid := range pids {
		d, err := localplane.CPUTime(pid)
		if err != nil {
			b.Fatal(err)
		}
		total += d
	}
	return total
}

// watchCompliant watches the replicas of namespace on the hub and closes the
// channel it returns once n of them are Compliant.
func watchCompliant(ctx context.Context, c client.WithWatch, namespace string, n int) (<-chan struct{}, error) {
	list := &policyv1.PolicyList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		compliant := map[string]bool{}
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			w, err := c.Watch(ctx, &policyv1.PolicyList{}, client.InNamespace(namespace), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*policyv1.Policy)
				if !ok {
					continue
				}
				rv = p.ResourceVersion
				compliant[p.Name] = ev.Type != watch.Deleted && p.Status.ComplianceState == policyv1.Compliant
				if countTrue(compliant) == n {
					w.Stop()
					close(done)
					return
				}
			}
		}
	}()
	return done, nil
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// hubIdentity registers cluster on the hub with the identity
// manifests/spoke/hub gives a spoke (its ServiceAccount and Role in the
// cluster's namespace) and writes a kubeconfig reaching the hub with that
// ServiceAccount's token: what both sides use.
func hubIdentity(b *testing.B, hub *auditedPlane, cluster, dir string) string {
	b.Helper()
	ctx := b.Context()
	root, err := localplane.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	if err := localplane.EnsureCluster(ctx, hub.client, cluster); err != nil {
		b.Fatal(err)
	}
	objs, err := localplane.ReadManifestFile(filepath.Join(root, "manifests/spoke/hub/rbac.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range objs {
		o.SetNamespace(cluster)
		if o.GetKind() == "RoleBinding" {
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = cluster
			}
			_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
		}
	}
	if _, err := localplane.Apply(ctx, hub.client, objs); err != nil {
		b.Fatal(err)
	}
	token, err := localplane.ServiceAccountToken(ctx, hub.client, cluster, "fleetpolicy-spoke")
	if err != nil {
		b.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hub.Config.Host, CertificateAuthorityData: hub.Config.CAData}
	cfg.AuthInfos["spoke"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["spoke"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "spoke"}
	cfg.CurrentContext = "spoke"
	path := filepath.Join(dir, cluster+"-hub-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// installOCMPolicyCRDs applies OCM v0.19's policy CRDs over fleetpolicy's,
// as on a managed cluster of OCM's agents.
func installOCMPolicyCRDs(b *testing.B, p *auditedPlane) {
	b.Helper()
	root, err := localplane.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	files, err := localplane.ManifestFiles(filepath.Join(root, localplane.OCMPolicyCRDs))
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		objs, err := localplane.ReadManifestFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := localplane.Apply(b.Context(), p.client, objs); err != nil {
			b.Fatal(err)
		}
	}
}

// auditEvent is what the benchmark reads of an audit log entry.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived metav1.MicroTime `json:"requestReceivedTimestamp"`
}

// fromAgent reports whether e is an agent's request: not the benchmark's nor
// the API server's own, and, when namespace is set (the hub, which serves
// both sides' clusters), made as that cluster's ServiceAccount.
func (e auditEvent) fromAgent(namespace string) bool {
	if strings.HasPrefix(e.UserAgent, harnessAgent) || strings.HasPrefix(e.User.Username, "system:apiserver") {
		return false
	}
	return namespace == "" || e.User.Username == "system:serviceaccount:"+namespace+":fleetpolicy-spoke"
}

func readAudit(b *testing.B, path string) []auditEvent {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	for lines.Scan() {
		var e auditEvent
		if err := json.Unmarshal(lines.Bytes(), &e); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		out = append(out, e)
	}
	if err := lines.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// window is a span of time: from (exclusive) to (inclusive).
type window struct{ from, to time.Time }

func (w window) holds(t time.Time) bool { return t.After(w.from) && !t.After(w.to) }

func filter(events []auditEvent, w window, namespace string) []auditEvent {
	var out []auditEvent
	for _, e := range events {
		if e.fromAgent(namespace) && w.holds(e.RequestReceived.Time) {
			out = append(out, e)
		}
	}
	return out
}

func count(events []auditEvent, w window, namespace string) int {
	return len(filter(events, w, namespace))
}

// writeProfile appends the requests of each span, counted per user agent,
// verb, resource and code, to path.
func writeProfile(b *testing.B, path, title string, spans map[string][]auditEvent) {
	b.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "=== %s\n", title)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range spans {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		counts := map[string]int{}
		for _, e := range spans[name] {
			key := e.Verb
			if e.ObjectRef != nil {
				key += " " + e.ObjectRef.Resource
				if e.ObjectRef.Subresource != "" {
					key += "/" + e.ObjectRef.Subresource
				}
			}
			if e.ResponseStatus != nil {
				key += fmt.Sprintf(" %d", e.ResponseStatus.Code)
			}
			agent, _, _ := strings.Cut(e.UserAgent, " ")
			counts[agent+" "+key]++
		}
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
		fmt.Fprintf(&sb, "--- %s: %d requests\n", name, len(spans[name]))
		for _, k := range keys {
			fmt.Fprintf(&sb, "%6d %s\n", counts[k], k)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(sb.String()); err != nil {
		b.Fatal(errors.Join(err, f.Close()))
	}
}
