package console_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	code := m.Run()
	stopBenchPlane()
	os.Exit(code)
}

// chromium is the browser the test drives: the Debian package's binary
// (`make chromium` installs it), or $CHROMIUM.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the console's browser test needs Chromium at %s (run `make chromium`, or set CHROMIUM): %v", path, err)
	}
	return path
}

// browser is one headless Chromium tab that records every console error,
// uncaught exception and browser log error (CSP violations, failed loads).
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T, exec string) *browser {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(exec),
		chromedp.NoSandbox, chromedp.Flag("headless", "new"), chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				b.mu.Lock()
				b.errors = append(b.errors, m.String()+" "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// run runs actions with a timeout.
func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one action that returns a value, with a timeout.
func get[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// consoleErrors returns and forgets the errors recorded so far.
func (b *browser) consoleErrors() []string {
	time.Sleep(100 * time.Millisecond) // the messages come from another goroutine
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.errors
	b.errors = nil
	return out
}

// view opens url, waits for its heading, checks that the browser reported no
// error, saves a screenshot as name and returns the text of <main>.
func (b *browser) view(t *testing.T, url, name string) string {
	t.Helper()
	b.run(t, "opening "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("main h1")))
	text := get(t, b, "reading "+url, chromedp.Text(chromedp.CSS("main")))
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("%s: the browser reported errors: %v", url, errs)
	}
	b.screenshot(t, name)
	return text
}

func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	saveScreenshot(t, name, get(t, b, "screenshot", chromedp.FullScreenshot(100)))
}

func saveScreenshot(t *testing.T, name string, shot []byte) {
	t.Helper()
	dir := filepath.Join(testkit.RepoRoot(t), "bin", "console-screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(t *testing.T, page, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not show %q; it shows:\n%s", page, w, text)
		}
	}
}

func lacks(t *testing.T, page, text string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(text, w) {
			t.Errorf("%s shows %q, which the viewer may not read:\n%s", page, w, text)
		}
	}
}

// configMapPolicy is a root policy whose template wants ConfigMap
// default/<configMap> on the managed cluster.
func configMapPolicy(ns, name, action, configMap, extra string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: %[2]s
  namespace: %[1]s
  annotations:
    policy.open-cluster-management.io/standards: NIST SP 800-53
    policy.open-cluster-management.io/categories: "CM Configuration Management, <script>alert(1)</script>"
    policy.open-cluster-management.io/controls: CM-2
spec:
  disabled: false
  remediationAction: %[3]s
%[5]s
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %[2]s-cm}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: %[4]s, namespace: default}}
`, ns, name, action, configMap, extra)
}

// decisionGroup is a PlacementDecision of placement pl as OCM's placement
// controller labels one decision group.
func decisionGroup(ns string, index int, cluster string) string {
	return fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: pl-decision-%[2]d
  namespace: %[1]s
  labels: {%[3]s: pl, %[4]s: "%[2]d", %[5]s: wave-%[2]d}
status:
  decisions: [{clusterName: %[6]s, reason: ""}]
`, ns, index, clusterv1beta1.PlacementLabel, clusterv1beta1.DecisionGroupIndexLabel, clusterv1beta1.DecisionGroupNameLabel, cluster)
}

// TestConsoleInABrowser runs a real hub and two real spokes (each its own API
// server), the console in front of the hub, and headless Chromium: every view
// loads with no browser error and shows what the API holds, a rollout is
// followed live without a reload, each table exports as CSV and JSON, and a
// viewer whose RBAC allows one namespace sees nothing of another.
func TestConsoleInABrowser(t *testing.T) {
	fleet := testkit.StartFleet(t, 2)
	exec := chromium(t)
	ctx := context.Background()
	hc := fleet.Hub.Client
	hubtest.Start(t, fleet.Hub.Config, nil)
	clusters := []string{"spoke1", "spoke2"}
	for i, name := range clusters {
		if err := localplane.EnsureCluster(ctx, hc, name); err != nil {
			t.Fatal(err)
		}
		spoketest.Start(t, fleet.Hub.Config, fleet.Spokes[i].Config, name)
	}
	// spoke1 has the ConfigMap cm-required wants, spoke2 does not.
	testkit.Apply(t, fleet.Spokes[0].Client, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wanted", "namespace": "default"}}`)
	testkit.Apply(t, hc, configMapPolicy("team-a", "cm-required", "inform", "wanted", ""))
	testkit.Apply(t, hc, testkit.PlacementRuleBinding("team-a", "both", clusters, "cm-required"))
	testkit.Apply(t, hc, `
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: baseline, namespace: team-a}
spec: {policies: [cm-required]}`)
	// A policy the placement policies (examples/placement's CEL policy) keep on
	// the EU cluster spoke1: the annotation is the one the hub's webhook
	// writes (placement is off in this test's hub).
	for _, ns := range []string{"team-a", "team-b", "fleetpolicy-placement"} {
		if err := localplane.EnsureNamespace(ctx, hc, ns); err != nil {
			t.Fatal(err)
		}
	}
	testkit.ApplyFile(t, hc, "examples/placement/policy-cel.yaml")
	testkit.Apply(t, hc, `{"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster", "metadata": {"name": "spoke1", "labels": {"jurisdiction": "eu"}}}`)
	testkit.Apply(t, hc, testkit.PolicyDoc("team-a", "eu-only", map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "true",
		"fleetpolicy.io/pci-compliance-level": "0", "placement.fleetpolicy.io/clusters": "spoke1"}))
	testkit.Apply(t, hc, testkit.PlacementRuleBinding("team-a", "eu", clusters, "eu-only"))
	testkit.Apply(t, hc, configMapPolicy("team-b", "secret-b", "inform", "team-b-only", ""))
	// A policy that waits for cm-required: Pending where cm-required is not Compliant (spoke2).
	testkit.Apply(t, hc, configMapPolicy("team-a", "needs-cm", "inform", "wanted",
		"  dependencies: [{apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: cm-required, compliance: Compliant}]"))
	testkit.Apply(t, hc, testkit.PlacementRuleBinding("team-a", "needs", clusters, "needs-cm"))
	testkit.Apply(t, hc, testkit.PlacementRuleBinding("team-b", "one", clusters[:1], "secret-b"))

	testkit.Eventually(t, 60*time.Second, "cm-required NonCompliant on spoke2, Compliant on spoke1", func() string {
		s := testkit.RootStatus(t, hc, "team-a", "cm-required")
		got := map[string]policyv1.ComplianceState{}
		for _, e := range s.Status {
			got[e.ClusterName] = e.ComplianceState
		}
		if got["spoke1"] != policyv1.Compliant || got["spoke2"] != policyv1.NonCompliant {
			return fmt.Sprint(got)
		}
		return ""
	})

	opts := console.DefaultOptions()
	opts.Config, opts.Scheme, opts.Refresh = fleet.Hub.Config, scheme.New(), 300*time.Millisecond
	admin, err := console.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stopSrv := context.WithCancel(ctx)
	t.Cleanup(stopSrv)
	go admin.Run(srvCtx)
	adminURL := httptest.NewServer(admin)
	t.Cleanup(adminURL.Close)

	b := newBrowser(t, exec)
	base := adminURL.URL

	t.Run("views", func(t *testing.T) {
		root := testkit.RootStatus(t, hc, "team-a", "cm-required")
		text := b.view(t, base+"/", "fleet")
		contains(t, "the fleet", text, "team-a/cm-required", "team-b/secret-b", "NonCompliant", "spoke1", "spoke2",
			"NIST SP 800-53", "CM-2", "baseline", "<script>alert(1)</script>")
		// Policies x clusters: each cell is the cluster's compliance with the policy.
		cells := get(t, b, "reading the matrix", chromedp.Evaluate[string](`(() => {
			const heads = [...document.querySelectorAll('#matrix-table thead th')].map(h => h.textContent);
			const row = [...document.querySelectorAll('#matrix-table tbody tr')].find(r => r.cells[0].textContent === 'team-a/cm-required');
			return heads.slice(1).map((h, i) => h + '=' + row.cells[i + 1].textContent).join(',');
		})()`))
		if got := strings.Split(cells, ","); len(got) != 2 || !slices.Contains(got, "spoke1=C") || !slices.Contains(got, "spoke2=NC") {
			t.Errorf("the matrix row of team-a/cm-required reads %q, want spoke1=C and spoke2=NC", cells)
		}
		// Worst first: the non-compliant policy before the compliant one.
		if i, j := strings.Index(text, "team-a/cm-required"), strings.Index(text, "team-b/secret-b"); i > j {
			t.Errorf("the fleet does not list the NonCompliant policy first:\n%s", text)
		}
		// Linked: the fleet's policy link leads to the policy.
		// (Clicked from the page's script: the live update may swap the node
		// between a DOM query and a synthetic click.)
		get(t, b, "following the policy link", chromedp.Evaluate[bool](`document.querySelector('a[href="/policies/team-a/cm-required"]').click(), true`))
		b.run(t, "waiting for the policy", chromedp.WaitVisible(chromedp.CSS("#compliance")))
		if url := get(t, b, "reading the URL", chromedp.Evaluate[string](`location.pathname`)); url != "/policies/team-a/cm-required" {
			t.Errorf("the fleet's policy link led to %s", url)
		}
		text = b.view(t, base+"/policies/team-a/cm-required", "policy")
		contains(t, "the policy", text, string(root.ComplianceState), "ConfigurationPolicy", "cm-required-cm", "spoke1", "spoke2", "baseline")
		testkit.Eventually(t, 60*time.Second, "needs-cm Pending on spoke2", func() string {
			for _, e := range testkit.RootStatus(t, hc, "team-a", "needs-cm").Status {
				if e.ClusterName == "spoke2" && e.ComplianceState == policyv1.Pending {
					return ""
				}
			}
			return "not yet"
		})
		text = b.view(t, base+"/policies/team-a/needs-cm", "policy-pending")
		contains(t, "the Pending policy", text, "needs-cm-cm: Pending; Dependencies were not satisfied: 1 is still pending (Policy team-a.cm-required)")
		text = b.view(t, base+"/policies/team-a/cm-required/clusters/spoke2", "replica")
		replica := &policyv1.Policy{}
		testkit.Get(t, hc, "spoke2", "team-a.cm-required", replica)
		if len(replica.Status.Details) == 0 || len(replica.Status.Details[0].History) == 0 {
			t.Fatalf("the replica on spoke2 has no history: %+v", replica.Status)
		}
		contains(t, "the replica", text, "NonCompliant", replica.Status.Details[0].History[0].Message)
		text = b.view(t, base+"/clusters/spoke1", "cluster")
		contains(t, "the cluster", text, "team-a/cm-required", "team-b/secret-b", "Compliant")
		text = b.view(t, base+"/policies/team-a/cm-required/placement", "placement")
		contains(t, "the placement", text, "both", "PlacementRule", "spoke1", "spoke2")
		// Why the placement policies keep eu-only off spoke2, as /explain says.
		testkit.Eventually(t, 30*time.Second, "eu-only bound to spoke1 only", func() string {
			if s := testkit.RootStatus(t, hc, "team-a", "eu-only"); len(s.Status) != 1 || s.Status[0].ClusterName != "spoke1" {
				return fmt.Sprintf("%+v", s.Status)
			}
			return ""
		})
		text = b.view(t, base+"/policies/team-a/eu-only/placement", "placement-excluded")
		contains(t, "the placement of eu-only", text, "spoke2", "not in the EU jurisdiction (label jurisdiction is not eu)")
	})

	t.Run("rollout followed live", func(t *testing.T) {
		// The page is open before the policy exists; it follows without a reload.
		b.run(t, "opening the rollout page", chromedp.Navigate(base+"/policies/team-a/rollout-p/rollout"),
			chromedp.WaitVisible(chromedp.CSS("main h1")))
		get(t, b, "marking the page", chromedp.Evaluate[bool](`window.notReloaded = true`))
		testkit.Apply(t, hc, decisionGroup("team-a", 0, "spoke1")+"---"+decisionGroup("team-a", 1, "spoke2"))
		testkit.Apply(t, hc, `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: pl, namespace: team-a}
spec: {}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: team-a}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: rollout-p}]
---
apiVersion: fleetpolicy.io/v1alpha1
kind: RolloutPlan
metadata: {name: rollout-p, namespace: team-a}
spec:
  policyRef: {name: rollout-p, namespace: team-a}
  strategy: {type: ProgressivePerGroup, progressivePerGroup: {minSuccessTime: 4s}}
  clusters: [{name: spoke1, wave: 0}, {name: spoke2, wave: 1}]
  waves:
  - {index: 0, clusters: [spoke1], decisionGroups: [{placement: pl, groupName: wave-0, groupIndex: 0}], mandatory: false, notBefore: 0s}
  - {index: 1, clusters: [spoke2], decisionGroups: [{placement: pl, groupName: wave-1, groupIndex: 1}], mandatory: false, notBefore: 4s}
`)
		testkit.Apply(t, hc, configMapPolicy("team-a", "rollout-p", "enforce", "rolled-out",
			"  rolloutStrategy: {type: ProgressivePerGroup, progressivePerGroup: {minSuccessTime: 4s}}"))
		seen := map[string]bool{}
		var held string
		deadline := time.Now().Add(90 * time.Second)
		for !seen["Succeeded"] && time.Now().Before(deadline) {
			read := get(t, b, "reading the rollout status", chromedp.Evaluate[string](
				`[document.querySelector('#rollout-status') ? document.querySelector('#rollout-status').textContent : '',
				  document.querySelector('#held-by') ? document.querySelector('#held-by').textContent : ''].join('\n')`))
			status, heldBy, _ := strings.Cut(read, "\n")
			seen[status] = true
			if heldBy != "" && held == "" {
				held = heldBy
				b.screenshot(t, "rollout-progressing")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !seen["Progressing"] || !seen["Succeeded"] {
			t.Fatalf("the open page showed the rollout statuses %v, want Progressing then Succeeded", seen)
		}
		if !strings.Contains(held, "wave 1") {
			t.Errorf("while wave 0 ran, the page never said what holds wave 1 back (saw %q)", held)
		}
		// The page's live requests answered 404 until the policy existed: the
		// browser logs each as a failed load; those are the page's content.
		for _, e := range b.consoleErrors() {
			if !strings.Contains(e, "404") {
				t.Errorf("following the rollout, the browser reported: %s", e)
			}
		}
		if !get(t, b, "checking the page was not reloaded", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
			t.Error("the rollout page reloaded instead of updating in place")
		}
		text := b.view(t, base+"/policies/team-a/rollout-p/rollout", "rollout")
		contains(t, "the rollout", text, "RolloutPlan rollout-p", "wave-0", "wave-1", "RolloutWave", "Every planned cluster is in the live rollout",
			"The live plan follows the RolloutPlan wave by wave")
		if svg := get(t, b, "counting the chart", chromedp.Evaluate[int](`document.querySelectorAll('main svg.timeline rect').length`)); svg < 4 {
			t.Errorf("the rollout chart has %d bars, want one share bar and one time span per wave", svg)
		}
	})

	t.Run("export", func(t *testing.T) {
		get := func(path string) *http.Response {
			t.Helper()
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s", path, resp.Status)
			}
			return resp
		}
		rows, err := csv.NewReader(get("/?export=csv&table=policies").Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) < 4 || rows[0][0] != "namespace" || rows[1][1] != "cm-required" {
			t.Errorf("policies CSV: %v", rows)
		}
		for _, r := range rows[1:] {
			if r[7] == "'<script>alert(1)</script>" {
				t.Errorf("a cell was prefixed that is no formula: %v", r)
			}
		}
		var clusters []map[string]string
		if err := json.NewDecoder(get("/policies/team-a/cm-required?export=json&table=clusters").Body).Decode(&clusters); err != nil {
			t.Fatal(err)
		}
		want := []map[string]string{{"cluster": "spoke2", "compliant": "NonCompliant", "rolloutStatus": "", "rolloutSince": ""},
			{"cluster": "spoke1", "compliant": "Compliant", "rolloutStatus": "", "rolloutSince": ""}}
		for i := range clusters {
			clusters[i]["rolloutStatus"], clusters[i]["rolloutSince"] = "", ""
		}
		if fmt.Sprint(clusters) != fmt.Sprint(want) {
			t.Errorf("policy clusters JSON: %v, want %v", clusters, want)
		}
		for _, path := range []string{"/clusters/spoke1?export=csv&table=policies", "/policies/team-a/rollout-p/rollout?export=json&table=waves",
			"/policies/team-a/rollout-p/placement?export=csv&table=decisions", "/policies/team-a/cm-required/clusters/spoke2?export=csv&table=history"} {
			get(path)
		}
		resp := get("/")
		for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("Content-Security-Policy: %q", csp)
		}
		post, err := http.Post(base+"/policies/team-a/cm-required", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		post.Body.Close()
		if post.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST to a page: %s, want 405", post.Status)
		}
	})

	t.Run("a viewer of one namespace sees nothing of another", func(t *testing.T) {
		token, err := localplane.ServiceAccountToken(ctx, hc, "team-a", "viewer")
		if err != nil {
			t.Fatal(err)
		}
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "policy-viewer"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"policy.open-cluster-management.io", "cluster.open-cluster-management.io", "fleetpolicy.io", "events.k8s.io"},
				Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "policy-viewer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "policy-viewer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team-a", Name: "viewer"}}}
		for _, o := range []client.Object{role, rb} {
			if err := hc.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		opts := opts
		opts.Identity, opts.Recheck = console.IdentityToken, 500*time.Millisecond
		viewerConsole, err := console.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		go viewerConsole.Run(srvCtx)
		vs := httptest.NewServer(viewerConsole)
		t.Cleanup(vs.Close)
		v := newBrowser(t, exec)
		// Signed out, a page leads to the sign-in form; the token given there is
		// what every read is made with.
		v.run(t, "signing in", chromedp.Navigate(vs.URL+"/?namespace=team-a"), chromedp.WaitVisible(chromedp.CSS("#token")),
			chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.Submit(chromedp.CSS("#token")),
			chromedp.WaitVisible(chromedp.CSS("#policies-table")))
		if errs := v.consoleErrors(); len(errs) > 0 {
			t.Errorf("signing in: the browser reported errors: %v", errs)
		}
		if cookies := get(t, v, "reading cookies", chromedp.Evaluate[string](`document.cookie`)); cookies != "" {
			t.Errorf("the page's script can read the cookies %q: the token cookie must be HttpOnly", cookies)
		}
		text := v.view(t, vs.URL+"/?namespace=team-a", "viewer-fleet")
		contains(t, "team-a's fleet", text, "team-a/cm-required", "team-a/rollout-p")
		lacks(t, "team-a's fleet", text, "secret-b", "team-b")
		// What RBAC denies shows as the API server's refusal, and nothing of it.
		for _, path := range []string{"/", "/policies/team-b/secret-b", "/policies/team-b/secret-b/rollout", "/clusters/spoke1",
			"/policies/team-b/secret-b/clusters/spoke1"} {
			v.run(t, "opening "+path, chromedp.Navigate(vs.URL+path), chromedp.WaitVisible(chromedp.CSS("#error")))
			body := get(t, v, "reading "+path, chromedp.Text(chromedp.CSS("main")))
			v.consoleErrors() // the 403 response itself is logged as a failed load
			contains(t, path, body, "forbidden")
			lacks(t, path, body, "secret-b-cm", "team-b-only", "NonCompliant", "Compliant")
		}
		v.screenshot(t, "viewer-forbidden")
		// An export is read with the same identity.
		req, _ := http.NewRequest(http.MethodGet, vs.URL+"/?export=csv&table=policies", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body.String(), "secret-b-cm") {
			t.Errorf("the viewer's export of every namespace: %s %s", resp.Status, body)
		}
		// A right revoked is a right gone: the viewer's cache of team-a is
		// dropped at its next confirmation.
		if err := hc.Delete(ctx, rb); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, "team-a refused once the RoleBinding is gone", func() string {
			req, _ := http.NewRequest(http.MethodGet, vs.URL+"/?namespace=team-a&export=csv&table=policies", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err.Error()
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				return resp.Status
			}
			return ""
		})
	})
}
