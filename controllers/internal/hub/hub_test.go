package hub_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

var (
	plane *localplane.Plane
	c     client.Client
)

var clusters = []string{"cluster-a", "cluster-b", "cluster-c", "cluster-d", "cluster-e", "cluster-f"}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	plane, err = localplane.Start("hub")
	if testkit.SkipsPackage(err) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer plane.Stop()
	c = plane.Client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, cl := range clusters {
		if err := localplane.EnsureCluster(ctx, c, cl); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	o := hub.DefaultManagerOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.Placement = false // no webhook certificates here; placement has its own tests
	o.StatusBatchDelay = 100 * time.Millisecond
	mgr, err := hub.NewManager(ctx, plane.Config, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctrl.SetLogger(logrDiscard())
	// go-template-utils logs every failed template with klog; the tests fail
	// templates on purpose.
	klog.SetLogger(logrDiscard())
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}

// applyFile applies a manifest file of the repository.
func applyFile(t *testing.T, rel string) {
	t.Helper()
	root, err := localplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := localplane.ReadManifests(rel, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localplane.Apply(context.Background(), c, localplane.APIObjects(objs)); err != nil {
		t.Fatal(err)
	}
}

// applyYAML applies inline manifests.
func applyYAML(t *testing.T, doc string) {
	t.Helper()
	if err := localplane.ApplyManifests(context.Background(), c, t.Name(), doc); err != nil {
		t.Fatal(err)
	}
}

// replicaActions returns cluster -> remediationAction of a root's replicas.
func replicaActions(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, cl := range clusters {
		p := &policyv1.Policy{}
		err := c.Get(context.Background(), client.ObjectKey{Namespace: cl, Name: replication.Name(ns, name)}, p)
		if err == nil {
			out[cl] = strings.ToLower(string(p.Spec.RemediationAction))
		} else if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	return out
}

// want builds an expected cluster -> action map: enforced clusters, the rest inform.
func want(bound, enforced []string) map[string]string {
	out := map[string]string{}
	for _, cl := range bound {
		out[cl] = "inform"
	}
	for _, cl := range enforced {
		out[cl] = "enforce"
	}
	return out
}

func expectReplicas(t *testing.T, ns, name string, expected map[string]string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("replicas of %s/%s", ns, name), func() string {
		got := replicaActions(t, ns, name)
		if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(expected)) {
			return fmt.Sprintf("got %v, want %v", sorted(got), sorted(expected))
		}
		return ""
	})
}

func sorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func rootStatus(t *testing.T, ns, name string) policyv1.PolicyStatus {
	t.Helper()
	p := &policyv1.Policy{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p.Status
}

func statusClusters(s policyv1.PolicyStatus) []string {
	var out []string
	for _, e := range s.Status {
		out = append(out, e.ClusterName)
	}
	return out
}

func get(t *testing.T, obj client.Object) {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

func unstructuredOf(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}
