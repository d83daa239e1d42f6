package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyk8sv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// hubLease is the hub's leader election lease (hub.Options: LeaderElectionID).
const hubLease = "fleetpolicy-hub.fleetpolicy.io"

func pods(t *testing.T, app string) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := c.List(t.Context(), list, client.InNamespace(hubNamespace), client.MatchingLabels{"app.kubernetes.io/name": app}); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func ready(p corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// leader is the pod holding the hub's lease ("" when none does).
func leader(t *testing.T) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: hubNamespace, Name: hubLease}, lease); err != nil {
		if apierrors.IsNotFound(err) {
			return ""
		}
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	// controller-runtime's identity is <hostname>_<uuid>; a pod's hostname is its name.
	holder, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return holder
}

// probe GETs http://<pod IP>:<port><path> (the node reaches pod IPs on np0).
func probe(p corev1.Pod, port int, path string) error {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://%s%s", net.JoinHostPort(p.Status.PodIP, fmt.Sprint(port)), path))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("%s: %s %s", path, resp.Status, body)
	}
	return nil
}

// TestHubReplicasReadyWithOneLeader: both hub pods are Ready (their readiness
// probe, /readyz, passes: under leader election that is the placement engine
// and the webhook server, on every replica), answer /healthz and /readyz, have
// not restarted, and exactly one of them holds the leader lease.
func TestHubReplicasReadyWithOneLeader(t *testing.T) {
	need(t)
	var names []string
	eventually(t, time.Minute, "two Ready hub pods and a leader among them", func() string {
		ps := pods(t, hubName)
		names = names[:0]
		for _, p := range ps {
			if !ready(p) {
				return p.Name + " not Ready"
			}
			names = append(names, p.Name)
		}
		if len(names) != 2 {
			return fmt.Sprintf("%d hub pods", len(names))
		}
		if l := leader(t); !slices.Contains(names, l) {
			return fmt.Sprintf("lease held by %q, not by a hub pod %v", l, names)
		}
		return ""
	})
	for _, p := range pods(t, hubName) {
		for _, path := range []string{"/healthz", "/readyz"} {
			if err := probe(p, 8081, path); err != nil {
				t.Errorf("hub pod %s: %v", p.Name, err)
			}
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount != 0 {
				t.Errorf("hub pod %s restarted %d times", p.Name, s.RestartCount)
			}
		}
		if p.Spec.SecurityContext == nil || p.Spec.SecurityContext.RunAsNonRoot == nil || !*p.Spec.SecurityContext.RunAsNonRoot {
			t.Errorf("hub pod %s does not run as non-root", p.Name)
		}
	}
	t.Logf("hub pods %v, leader %s", names, leader(t))
}

// TestSpokeProbes: the spoke pod is Ready, answers /healthz and /readyz on its
// probe port, and has not restarted.
func TestSpokeProbes(t *testing.T) {
	need(t)
	eventually(t, time.Minute, "a Ready spoke pod", func() string {
		ps := pods(t, spokeName)
		if len(ps) != 1 || !ready(ps[0]) {
			return fmt.Sprintf("%d spoke pods, not all Ready", len(ps))
		}
		return ""
	})
	p := pods(t, spokeName)[0]
	for _, path := range []string{"/healthz", "/readyz"} {
		if err := probe(p, 8081, path); err != nil {
			t.Errorf("spoke pod %s: %v", p.Name, err)
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.RestartCount != 0 {
			t.Errorf("spoke pod %s restarted %d times", p.Name, s.RestartCount)
		}
	}
}

// process finds the main process of pod's first container on this machine:
// the process whose cgroup path holds the container's ID (the kubelet's
// cgroupfs driver names each container's cgroup after it).
func process(t *testing.T, p corev1.Pod) int {
	t.Helper()
	if len(p.Status.ContainerStatuses) == 0 {
		t.Fatalf("pod %s has no container status", p.Name)
	}
	_, id, _ := strings.Cut(p.Status.ContainerStatuses[0].ContainerID, "://")
	if id == "" {
		t.Fatalf("pod %s: no container ID", p.Name)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	pid := 0
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte(id)) {
			continue
		}
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if pid == 0 || n < pid { // the container's first process
			pid = n
		}
	}
	if pid == 0 {
		t.Fatalf("pod %s: no process in a cgroup of container %s", p.Name, id)
	}
	return pid
}

// TestContainersAsTheManifestsSayTheyRun reads the hub's and the spoke's
// processes from this machine's /proc: user 65532 (runAsNonRoot, the
// images' user), a read-only root filesystem, and GOMEMLIMIT as the
// manifests set it: the hub's 320MiB, the spoke's from its memory limit
// (256Mi, resolved by the kubelet to bytes).
func TestContainersAsTheManifestsSayTheyRun(t *testing.T) {
	need(t)
	for app, memlimit := range map[string]string{hubName: "320MiB", spokeName: "268435456"} {
		for _, p := range pods(t, app) {
			pid := process(t, p)
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`(?m)^Uid:\s+65532\s`).Match(status) {
				t.Errorf("%s (pid %d) does not run as 65532:\n%s", p.Name, pid, status)
			}
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				t.Fatal(err)
			}
			if env := strings.Split(string(environ), "\x00"); !slices.Contains(env, "GOMEMLIMIT="+memlimit) {
				t.Errorf("%s: GOMEMLIMIT is not %s: %v", p.Name, memlimit, env)
			}
			mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
			if err != nil {
				t.Fatal(err)
			}
			rootRO := false
			for _, line := range strings.Split(string(mounts), "\n") {
				// ID parent major:minor root mount-point options ...
				if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
					rootRO = strings.HasPrefix(f[5], "ro,") || f[5] == "ro"
				}
			}
			if !rootRO {
				t.Errorf("%s: the root filesystem is not read-only", p.Name)
			}
		}
	}
}

// TestSpokeEnforcesAPolicy: a root Policy bound to cluster1 is replicated by
// the hub pod, enforced by the spoke pod on the node's API server (the
// ConfigMap it demands appears), and its compliance reaches the hub's root;
// then the replica stays quiet (the spoke leaves a replica that is its own
// copy alone).
func TestSpokeEnforcesAPolicy(t *testing.T) {
	need(t)
	ns := "e2e-enforce"
	took := enforceConfigMap(t, ns, "enforced", cluster, "e2e-enforced", "fleetpolicy-spoke")
	t.Logf("Compliant on the hub %s after the Policy was applied", took.Round(time.Millisecond))
	// The hub is its own managed cluster here: the replica is its own copy,
	// and hub and spoke must not take turns rewriting it.
	w, err := client.NewWithWatch(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := w.Watch(t.Context(), &policyv1.PolicyList{}, client.InNamespace(cluster))
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	writes := 0
	for deadline := time.After(2 * time.Second); ; {
		select {
		case ev := <-watcher.ResultChan():
			if ev.Type == watch.Modified {
				writes++
			}
			continue
		case <-deadline:
		}
		break
	}
	if writes > 3 {
		t.Errorf("the replicas in %s were written %d times in 2 s once Compliant", cluster, writes)
	}
}

func failurePolicy(ctx context.Context) string {
	w := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: hub.PlacementWebhookConfiguration}, w); err != nil {
		return err.Error()
	}
	return string(*w.Webhooks[0].FailurePolicy)
}

// TestPlacementWebhookThroughItsService runs the EU/PCI CEL example of
// examples/placement: the API server calls the hub's webhook through Service
// fleetpolicy-hub-webhook, trusting the CA the no-cert-manager overlay put in
// caBundle; the webhook annotates a Policy with the clusters it may go to and
// denies one the placement policy refuses.
func TestPlacementWebhookThroughItsService(t *testing.T) {
	need(t)
	w := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: hub.PlacementWebhookConfiguration}, w); err != nil {
		t.Fatal(err)
	}
	if got := string(w.Webhooks[0].ClientConfig.CABundle); got != string(webhookCA) {
		t.Fatalf("the webhook's caBundle is not the overlay's CA:\n%s", got)
	}
	if _, ok := w.Annotations["cert-manager.io/inject-ca-from"]; ok {
		t.Errorf("the cert-manager annotation is still on the webhook")
	}
	testkit.ApplyFile(t, c, "examples/placement/clusters.yaml")
	testkit.ApplyFile(t, c, "examples/placement/policy-cel.yaml")
	t.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &corev1.ConfigMap{}, client.InNamespace(placement.Namespace), client.HasLabels{placement.LanguageLabel})
		err := poll(context.Background(), time.Minute, "failurePolicy Ignore once no placement policy is left", func() string {
			if got := failurePolicy(context.Background()); got != string(admissionregistrationv1.Ignore) {
				return got
			}
			return ""
		})
		if err != nil {
			t.Error(err)
		}
	})
	eventually(t, time.Minute, "failurePolicy Fail while a placement policy exists", func() string {
		if got := failurePolicy(t.Context()); got != string(admissionregistrationv1.Fail) {
			return "failurePolicy " + got
		}
		return ""
	})
	ns := "e2e-placement"
	eventually(t, time.Minute, "the webhook annotates a Policy", func() string {
		if err := testkit.TryApply(t, c, testkit.PolicyDoc(ns, "payments", map[string]string{
			"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "2",
		})); err != nil {
			return err.Error()
		}
		p := &policyv1.Policy{}
		testkit.Get(t, c, ns, "payments", p)
		if got := p.Annotations[placement.ClustersAnnotation]; got != "eu-dublin,eu-frankfurt" {
			return fmt.Sprintf("annotation %q", got)
		}
		return ""
	})
	err := testkit.TryApply(t, c, testkit.PolicyDoc(ns, "bad-level", map[string]string{
		"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "high",
	}))
	if err == nil || !strings.Contains(err.Error(), "want a whole number") {
		t.Fatalf("want a denial carrying the placement policy's message, got %v", err)
	}
}

// webhookService is the address of Service fleetpolicy-hub-webhook's
// ClusterIP (kube-proxy routes the node's own connections to it).
func webhookService(t *testing.T) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: hubNamespace, Name: "fleetpolicy-hub-webhook"}, svc); err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, "443")
}

func postExplain(t *testing.T, addr, token, body string) (int, string, error) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(webhookCA)
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: webhookHost, MinVersion: tls.VersionTLS12},
	}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+addr+hub.ExplainPath, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/yaml")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
	return resp.StatusCode, string(b), nil
}

// TestExplainAuthenticatedThroughTheService: /explain, on the webhook's port
// behind its Service and certificate, answers 401 without a token, 403 to a
// ServiceAccount the API server authenticates but that may not POST it, and
// 200 to one bound to ClusterRole fleetpolicy-explain.
func TestExplainAuthenticatedThroughTheService(t *testing.T) {
	need(t)
	addr := webhookService(t)
	body := testkit.PolicyDoc("e2e-explain", "p", nil)
	nobody, err := localplane.ServiceAccountToken(t.Context(), c, "e2e-tokens", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	explainer, err := localplane.HubRoleToken(t.Context(), c, "e2e-tokens", "explainer", "fleetpolicy-explain")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who, token string
		want       int
	}{{"anonymous", "", http.StatusUnauthorized}, {"nobody", nobody, http.StatusForbidden}, {"explainer", explainer, http.StatusOK}} {
		eventually(t, 30*time.Second, tc.who+" gets "+fmt.Sprint(tc.want), func() string {
			code, msg, err := postExplain(t, addr, tc.token, body)
			if err != nil {
				return err.Error()
			}
			if code != tc.want {
				return fmt.Sprintf("%d %s", code, msg)
			}
			return ""
		})
	}
}

func evict(t *testing.T, pod string) error {
	t.Helper()
	return clientset.PolicyV1().Evictions(hubNamespace).Evict(t.Context(), &policyk8sv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: pod},
	})
}

// TestHubPodDisruptionBudget: with both hub replicas healthy the budget
// allows one disruption: evicting one pod succeeds and evicting the other
// right after is refused (429), until the Deployment has replaced the first.
func TestHubPodDisruptionBudget(t *testing.T) {
	need(t)
	eventually(t, time.Minute, "the budget allows one disruption", func() string {
		pdb := &policyk8sv1.PodDisruptionBudget{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: hubNamespace, Name: hubName}, pdb); err != nil {
			return err.Error()
		}
		if s := pdb.Status; s.ExpectedPods != 2 || s.CurrentHealthy != 2 || s.DisruptionsAllowed != 1 {
			return fmt.Sprintf("expected %d, healthy %d, allowed %d", s.ExpectedPods, s.CurrentHealthy, s.DisruptionsAllowed)
		}
		return ""
	})
	ps := pods(t, hubName)
	if len(ps) != 2 {
		t.Fatalf("%d hub pods", len(ps))
	}
	if err := evict(t, ps[0].Name); err != nil {
		t.Fatalf("evicting %s with one disruption allowed: %v", ps[0].Name, err)
	}
	err := evict(t, ps[1].Name)
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting the second hub pod %s: want 429 (the budget), got %v", ps[1].Name, err)
	}
	t.Logf("second eviction refused: %v", err)
	waitHubReplaced(t, ps[0].Name)
}

// waitHubReplaced waits until gone has left and two other hub pods are Ready.
func waitHubReplaced(t *testing.T, gone string) {
	t.Helper()
	eventually(t, 2*time.Minute, gone+" replaced by a Ready hub pod", func() string {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: hubNamespace, Name: gone}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
			return gone + " still there"
		}
		n := 0
		for _, p := range pods(t, hubName) {
			if ready(p) {
				n++
			}
		}
		if n != 2 {
			return fmt.Sprintf("%d Ready hub pods", n)
		}
		return ""
	})
}

// reporter plays the spoke of the clusters that have none (test-only, as
// rollouttest's fake spoke): after delay it reports each of their replicas
// Compliant when enforced (NonCompliant while informed) for its generation,
// and records the order in which clusters were first seen enforced.
type reporter struct {
	root     string
	clusters []string
	delay    time.Duration
	mu       sync.Mutex
	seen     map[string]time.Time
	enforced []string
}

func (r *reporter) run(ctx context.Context) {
	for ctx.Err() == nil {
		list := &policyv1.PolicyList{}
		if err := c.List(ctx, list, client.MatchingLabels{replication.LabelRootPolicy: r.root}); err == nil {
			for i := range list.Items {
				r.observe(ctx, &list.Items[i])
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (r *reporter) observe(ctx context.Context, p *policyv1.Policy) {
	key := fmt.Sprintf("%s/%d", p.Namespace, p.Generation)
	action := strings.ToLower(string(p.Spec.RemediationAction))
	r.mu.Lock()
	if action == "enforce" && !slices.Contains(r.enforced, p.Namespace) {
		r.enforced = append(r.enforced, p.Namespace)
	}
	if _, ok := r.seen[key]; !ok {
		r.seen[key] = time.Now()
	}
	due := time.Since(r.seen[key]) >= r.delay
	r.mu.Unlock()
	if !slices.Contains(r.clusters, p.Namespace) || !due || p.Status.ObservedGeneration == p.Generation {
		return
	}
	p.Status.ComplianceState = policyv1.NonCompliant
	if action == "enforce" {
		p.Status.ComplianceState = policyv1.Compliant
	}
	p.Status.ObservedGeneration = p.Generation
	_ = c.Status().Update(ctx, p)
}

func (r *reporter) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.enforced)
}

// TestRolloutCarriesOnWhenTheLeaderIsDeleted: a Progressive rollout (one
// cluster at a time) over cluster1, whose spoke pod enforces it, and three
// clusters the test reports for; the leader hub pod is deleted once the
// second cluster is enforced. The other replica takes the lease and the
// rollout carries on to Succeeded, wave by wave, every cluster Compliant.
func TestRolloutCarriesOnWhenTheLeaderIsDeleted(t *testing.T) {
	need(t)
	ns := "e2e-rollout"
	fake := []string{"e2e-c2", "e2e-c3", "e2e-c4"}
	waves := append([]string{cluster}, fake...)
	for _, cl := range fake {
		if err := localplane.EnsureCluster(t.Context(), c, cl); err != nil {
			t.Fatal(err)
		}
	}
	r := &reporter{root: replication.Name(ns, "rollout"), clusters: fake, delay: 3 * time.Second, seen: map[string]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.run(ctx)

	// Decisions first, one group per cluster in wave order, as OCM's placement
	// controller writes them (the test plays it: it does not run here).
	for i, cl := range waves {
		testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: pl-decision-%[1]d
  namespace: %[2]s
  labels: {%[3]s: pl, %[4]s: "%[1]d", %[5]s: wave-%[1]d}
status:
  decisions: [{clusterName: %[6]s, reason: ""}]
`, i, ns, clusterv1beta1.PlacementLabel, clusterv1beta1.DecisionGroupIndexLabel, clusterv1beta1.DecisionGroupNameLabel, cl))
	}
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: rollout, namespace: %[1]s}
spec:
  disabled: false
  remediationAction: enforce
  rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: 1}}
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: e2e-rollout}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: e2e-rollout, namespace: default}}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: pl, namespace: %[1]s}
spec: {}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: %[1]s}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: rollout}]
`, ns))
	start := time.Now()
	eventually(t, 2*time.Minute, "the second cluster enforced", func() string {
		if got := r.order(); !slices.Contains(got, fake[0]) {
			return fmt.Sprintf("enforced %v; root %v", got, testkit.RootStatus(t, c, ns, "rollout").Status)
		}
		return ""
	})
	old := leader(t)
	if old == "" {
		t.Fatal("no hub pod holds the lease")
	}
	if s := testkit.RootStatus(t, c, ns, "rollout"); s.RolloutStatus == policyv1.RolloutSucceeded {
		t.Fatalf("the rollout ended before the leader could be deleted in the middle of it: %v", s.Status)
	}
	if err := c.Delete(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: old}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted the leader %s %s into the rollout (enforced so far: cluster1, %v)", old, time.Since(start).Round(time.Millisecond), r.order())
	eventually(t, 2*time.Minute, "another hub pod takes the lease", func() string {
		if l := leader(t); l == "" || l == old {
			return "lease held by " + l
		}
		return ""
	})
	t.Logf("%s took the lease", leader(t))
	eventually(t, 3*time.Minute, "the rollout Succeeded", func() string {
		s := testkit.RootStatus(t, c, ns, "rollout")
		if s.RolloutStatus != policyv1.RolloutSucceeded || s.ComplianceState != policyv1.Compliant || len(s.Status) != len(waves) {
			return fmt.Sprintf("rolloutStatus %q, compliance %q, clusters %v", s.RolloutStatus, s.ComplianceState, s.Status)
		}
		return ""
	})
	if got := r.order(); !slices.Equal(got, waves) {
		t.Errorf("clusters enforced in the order %v, want %v (one wave each)", got, waves)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "e2e-rollout"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the spoke did not enforce the rollout's ConfigMap: %v", err)
	}
	t.Logf("rollout Succeeded %s after it started", time.Since(start).Round(time.Millisecond))
	waitHubReplaced(t, old)
}

// enforceConfigMap applies a root Policy ns/name, bound to cluster, whose
// ConfigurationPolicy enforces the ConfigMap default/configMap with the data
// enforced-by: by; it waits for the root to be Compliant, checks the ConfigMap
// on the node's API server, and returns how long after the apply the root
// was Compliant.
func enforceConfigMap(t *testing.T, ns, name, cluster, configMap, by string) time.Duration {
	t.Helper()
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  disabled: false
  remediationAction: enforce
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %[3]s}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: %[3]s, namespace: default}
            data: {enforced-by: %[4]s}
`, name, ns, configMap, by))
	testkit.Apply(t, c, testkit.PlacementRuleBinding(ns, name, []string{cluster}, name))
	applied := time.Now()
	eventually(t, 2*time.Minute, "root "+name+" Compliant", func() string {
		s := testkit.RootStatus(t, c, ns, name)
		if s.ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("compliance %q, clusters %v", s.ComplianceState, s.Status)
		}
		return ""
	})
	took := time.Since(applied)
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: configMap}, cm); err != nil {
		t.Fatalf("the spoke did not enforce the ConfigMap %s: %v", configMap, err)
	}
	if cm.Data["enforced-by"] != by {
		t.Errorf("ConfigMap %s data %v, want enforced-by: %s", configMap, cm.Data, by)
	}
	return took
}
