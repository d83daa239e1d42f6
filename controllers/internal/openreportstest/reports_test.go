package openreportstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

var (
	plane *localplane.Plane
	c     client.Client
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testkit.RunWithPlane(m, "hub", []string{"cluster-a", "cluster-b"}, func(_ context.Context, p *localplane.Plane) error {
		plane, c = p, p.Client
		return nil
	}))
}

// TestHubWritesOpenReports: a hub with --openreports on an API server that
// does not serve the Report API runs and propagates; once OpenReports' CRD is
// installed, a hub (as its ServiceAccount, with manifests/hub's RBAC and the
// openreports component's) writes one Report per cluster namespace with one
// result per policy (Compliant pass, NonCompliant fail, Pending skip, an
// unreported cluster none), writes a cluster's Report again only when its
// results change, puts back a Report someone deleted, and deletes the Reports
// once the policies are gone. About 10 s.
func TestHubWritesOpenReports(t *testing.T) {
	ctx := context.Background()
	applyHubRBAC(t)
	cfg := rest.CopyConfig(plane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:fleetpolicy-system:fleetpolicy-hub"}
	withReports := func(o *hub.ManagerOptions) { o.OpenReports = true }

	testkit.Apply(t, c, policies)
	first := hubtest.Start(t, cfg, withReports)
	waitReplica(t, "cluster-b", "q")
	first.Stop()

	installReportCRD(t)
	hubtest.Start(t, cfg, withReports)
	report(t, "p", "cluster-a", policyv1.Compliant)
	report(t, "p", "cluster-b", policyv1.NonCompliant)
	report(t, "q", "cluster-b", policyv1.Pending) // q on cluster-a has not reported

	a := waitReport(t, "cluster-a", "reports/p=pass", openreportsv1alpha1.ReportSummary{Pass: 1})
	b := waitReport(t, "cluster-b", "reports/p=fail reports/q=skip", openreportsv1alpha1.ReportSummary{Fail: 1, Skip: 1})
	if a.Scope == nil || a.Scope.Kind != "ManagedCluster" || a.Scope.Name != "cluster-a" || a.Source != "fleetpolicy" ||
		a.Results[0].Subjects[0].Name != replication.Name("reports", "p") || a.Results[0].Subjects[0].Namespace != "cluster-a" {
		t.Errorf("Report of cluster-a: scope %+v, source %q, results %+v", a.Scope, a.Source, a.Results)
	}

	report(t, "p", "cluster-a", policyv1.NonCompliant)
	a = waitReport(t, "cluster-a", "reports/p=fail", openreportsv1alpha1.ReportSummary{Fail: 1})
	time.Sleep(time.Second) // twenty batch delays: a needless write would have come
	if now := get(t, "cluster-b"); now == nil || now.ResourceVersion != b.ResourceVersion {
		t.Errorf("cluster-b's Report was written although its results did not change")
	}
	if now := get(t, "cluster-a"); now == nil || now.ResourceVersion != a.ResourceVersion {
		t.Errorf("cluster-a's Report was written again after its change (its own write event brought it back)")
	}

	if err := c.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitReport(t, "cluster-b", "reports/p=fail reports/q=skip", openreportsv1alpha1.ReportSummary{Fail: 1, Skip: 1})

	for _, name := range []string{"p", "q"} {
		if err := c.Delete(ctx, &policyv1.Policy{ObjectMeta: objectMeta("reports", name)}); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 20*time.Second, "Reports deleted with the policies", func() string {
		for _, cl := range []string{"cluster-a", "cluster-b"} {
			if r := get(t, cl); r != nil {
				return fmt.Sprintf("%s still has %v", cl, results(r))
			}
		}
		return ""
	})
}

// policies are two inform policies on both clusters (a PlacementRule the hub
// schedules).
const policies = `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: p
  namespace: reports
  annotations: {policy.open-cluster-management.io/categories: CM Configuration Management}
spec: {disabled: false, remediationAction: inform, policy-templates: []}
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: q, namespace: reports}
spec: {disabled: false, remediationAction: inform, policy-templates: []}
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: both, namespace: reports}
spec: {clusters: [{name: cluster-a}, {name: cluster-b}]}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: both, namespace: reports}
placementRef: {apiGroup: apps.open-cluster-management.io, kind: PlacementRule, name: both}
subjects:
- {apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}
- {apiGroup: policy.open-cluster-management.io, kind: Policy, name: q}
`

// applyHubRBAC applies manifests/hub (but what a bare API server cannot take:
// cert-manager's kinds, the placement webhook configuration) and the
// openreports component's RBAC.
func applyHubRBAC(t *testing.T) {
	t.Helper()
	objs, err := localplane.ReadManifests("manifests/hub", bytes.NewReader(testkit.KustomizeBuild(t, "manifests/hub")))
	if err != nil {
		t.Fatal(err)
	}
	var kept []*unstructured.Unstructured
	for _, o := range objs {
		if !strings.HasPrefix(o.GetAPIVersion(), "cert-manager.io/") && o.GetKind() != "MutatingWebhookConfiguration" {
			kept = append(kept, o)
		}
	}
	if _, err := localplane.Apply(context.Background(), c, kept); err != nil {
		t.Fatal(err)
	}
	testkit.ApplyFile(t, c, "manifests/hub/openreports/rbac.yaml")
}

// installReportCRD installs OpenReports' Report CRD and waits until it is served.
func installReportCRD(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "manifests/crds/openreports/openreports.io_reports.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localplane.ReadManifests("report CRD", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localplane.Apply(context.Background(), c, objs); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the Report API served", func() string {
		if err := c.List(context.Background(), &openreportsv1alpha1.ReportList{}); err != nil {
			return err.Error()
		}
		return ""
	})
}

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

func waitReplica(t *testing.T, cluster, name string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, "replica of "+name+" in "+cluster, func() string {
		r := &policyv1.Policy{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: replication.Name("reports", name)}, r); err != nil {
			return err.Error()
		}
		return ""
	})
}

// report writes the compliance of policy name's replica on cluster, as a
// spoke's status sync would.
func report(t *testing.T, name, cluster string, state policyv1.ComplianceState) {
	t.Helper()
	waitReplica(t, cluster, name)
	testkit.Eventually(t, 20*time.Second, "compliance written", func() string {
		r := &policyv1.Policy{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: replication.Name("reports", name)}, r); err != nil {
			return err.Error()
		}
		patch := client.MergeFrom(r.DeepCopy())
		r.Status.ComplianceState = state
		if err := c.Status().Patch(context.Background(), r, patch); err != nil {
			return err.Error()
		}
		return ""
	})
}

// get returns the hub's Report in cluster's namespace, nil when there is none.
func get(t *testing.T, cluster string) *openreportsv1alpha1.Report {
	t.Helper()
	r := &openreportsv1alpha1.Report{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: "fleetpolicy"}, r)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// results lists a Report's results as "policy=result", in order.
func results(r *openreportsv1alpha1.Report) string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.Policy+"="+string(res.Result))
	}
	return strings.Join(out, " ")
}

// waitReport waits for cluster's Report to hold want (results as results
// lists them) and summary, and returns it.
func waitReport(t *testing.T, cluster, want string, summary openreportsv1alpha1.ReportSummary) *openreportsv1alpha1.Report {
	t.Helper()
	var got *openreportsv1alpha1.Report
	testkit.Eventually(t, 20*time.Second, cluster+"'s Report: "+want, func() string {
		got = get(t, cluster)
		switch {
		case got == nil:
			return "no Report"
		case results(got) != want || got.Summary != summary:
			return fmt.Sprintf("results %q, summary %+v", results(got), got.Summary)
		}
		return ""
	})
	return got
}
