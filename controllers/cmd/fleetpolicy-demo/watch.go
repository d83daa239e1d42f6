package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// watcher prints, once a second, what changed in the fleet: each root policy's
// per-cluster compliance and rollout status with the latest message its
// replica reports, the hub's rollout-wave Events, and where placement policies
// put each placed policy and why.
type watcher struct {
	out      io.Writer
	hub      *localplane.Plane
	spokes   map[string]*localplane.Plane
	clusters []string
	lines    map[string]string // last line printed per key
	events   map[string]bool   // events already printed
	placed   map[string]bool   // policies whose placement was explained
	start    time.Time
}

func newWatcher(out io.Writer, hubPlane *localplane.Plane, spokes map[string]*localplane.Plane, clusters []string) *watcher {
	return &watcher{out: out, hub: hubPlane, spokes: spokes, clusters: clusters,
		lines: map[string]string{}, events: map[string]bool{}, placed: map[string]bool{}, start: time.Now()}
}

func (w *watcher) run(ctx context.Context, timeout time.Duration) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		converged, err := w.report(ctx)
		if err != nil {
			return err
		}
		if converged {
			step(w.out, "the fleet converged in %s", time.Since(w.start).Round(time.Second))
			return w.summary(ctx)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deadline:
			_ = w.summary(ctx)
			return fmt.Errorf("the fleet did not converge within %s", timeout)
		case <-tick.C:
		}
	}
}

// roots are the root policies on the hub.
func (w *watcher) roots(ctx context.Context) ([]policyv1.Policy, error) {
	list := &policyv1.PolicyList{}
	if err := w.hub.Client.List(ctx, list); err != nil {
		return nil, err
	}
	var out []policyv1.Policy
	for _, p := range list.Items {
		if !replication.IsReplica(&p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b policyv1.Policy) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (w *watcher) print(key, line string) {
	if w.lines[key] == line {
		return
	}
	w.lines[key] = line
	fmt.Fprintf(w.out, "    [%5.1fs] %s\n", time.Since(w.start).Seconds(), line)
}

// report prints what changed and says whether the fleet has converged: every
// root policy reports a settled compliance on each of its clusters and every
// rollout has succeeded.
func (w *watcher) report(ctx context.Context) (bool, error) {
	roots, err := w.roots(ctx)
	if err != nil {
		return false, err
	}
	converged := len(roots) > 0
	for _, root := range roots {
		if _, restricted := binding.AllowedClusters(root.Annotations); restricted && !w.placed[root.Name] {
			w.placed[root.Name] = true
			w.explain(ctx, &root)
		}
		if len(root.Status.Status) == 0 {
			converged = false
			continue
		}
		if r := root.Status.RolloutStatus; r != "" && r != policyv1.RolloutSucceeded {
			converged = false
		}
		for _, e := range root.Status.Status {
			msg := w.replicaMessage(ctx, &root, e.ClusterName)
			line := fmt.Sprintf("%-16s %-13s %-12s", root.Name, e.ClusterName, orDash(string(e.ComplianceState)))
			if root.Spec.RolloutStrategy != nil && root.Spec.RolloutStrategy.Type != "" && root.Spec.RolloutStrategy.Type != "All" {
				line += fmt.Sprintf(" rollout %-11s", e.RolloutStatus)
			}
			if msg != "" {
				line += " " + msg
			}
			w.print(root.Name+"/"+e.ClusterName, line)
			if e.ComplianceState == "" || e.ComplianceState == policyv1.Pending ||
				(e.RolloutStatus != "" && e.RolloutStatus != policyv1.RolloutSucceeded) {
				converged = false
			}
		}
	}
	w.waveEvents(ctx)
	return converged, nil
}

// replicaMessage is the newest compliance message the cluster reported.
func (w *watcher) replicaMessage(ctx context.Context, root *policyv1.Policy, cluster string) string {
	r := &policyv1.Policy{}
	if err := w.hub.Client.Get(ctx, objectKey(cluster, replication.Name(root.Namespace, root.Name)), r); err != nil {
		return ""
	}
	for _, d := range r.Status.Details {
		if d != nil && len(d.History) > 0 {
			return shorten(d.History[0].Message, 110)
		}
	}
	return ""
}

func (w *watcher) waveEvents(ctx context.Context) {
	list := &eventsv1.EventList{}
	if err := w.hub.Client.List(ctx, list); err != nil {
		return
	}
	slices.SortFunc(list.Items, func(a, b eventsv1.Event) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	for _, e := range list.Items {
		if e.Reason != "RolloutWave" || w.events[e.Name] {
			continue
		}
		w.events[e.Name] = true
		fmt.Fprintf(w.out, "    [%5.1fs] wave: %s %s\n", time.Since(w.start).Seconds(), e.Regarding.Name, e.Note)
	}
}

// explain asks the hub's /explain endpoint (TLS) where a placed policy may go,
// as a ServiceAccount bound to ClusterRole fleetpolicy-explain (the endpoint
// authenticates and authorizes its callers).
func (w *watcher) explain(ctx context.Context, root *policyv1.Policy) {
	fmt.Fprintf(w.out, "    placement policies put %s on: %s\n", root.Name, root.Annotations[binding.ClustersAnnotation])
	ca, err := os.ReadFile(filepath.Join(w.hub.WebhookCertDir, "tls.crt"))
	if err != nil {
		return
	}
	token, err := localplane.HubRoleToken(ctx, w.hub.Client, "fleetpolicy-demo", "explainer", "fleetpolicy-explain")
	if err != nil {
		fmt.Fprintf(w.out, "      (no token for /explain: %v)\n", err)
		return
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	body, err := json.Marshal(map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1", "kind": "Policy",
		"metadata": map[string]any{"name": root.Name, "namespace": root.Namespace, "annotations": root.Annotations},
	})
	if err != nil {
		return
	}
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		fmt.Sprintf("https://%s:%d%s", w.hub.WebhookHost, w.hub.WebhookPort, hub.ExplainPath), bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := httpClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var answer hub.ExplainResponse
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&answer) != nil {
		return
	}
	for _, c := range answer.Clusters {
		verdict := "allowed "
		if !c.Allowed {
			verdict = "excluded"
		}
		fmt.Fprintf(w.out, "      %-13s %s %s\n", c.Name, verdict, shorten(strings.Join(c.Reasons, "; "), 100))
	}
}

// summary prints each cluster's view: the policies it holds and their status.
func (w *watcher) summary(ctx context.Context) error {
	step(w.out, "what each managed cluster holds now")
	for _, c := range w.clusters {
		list := &policyv1.PolicyList{}
		if err := w.spokes[c].Client.List(ctx, list, client.InNamespace(c)); err != nil {
			return err
		}
		var held []string
		for _, p := range list.Items {
			held = append(held, fmt.Sprintf("%s (%s, %s)", p.Name,
				strings.ToLower(string(p.Spec.RemediationAction)), orDash(string(p.Status.ComplianceState))))
		}
		slices.Sort(held)
		fmt.Fprintf(w.out, "    %-13s %s\n", c, strings.Join(held, ", "))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
