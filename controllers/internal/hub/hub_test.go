package hub_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"

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
	os.Exit(testkit.RunWithPlane(m, "hub", clusters, startHub))
}

// startHub starts the hub on the plane the package's tests share.
func startHub(ctx context.Context, p *localplane.Plane) error {
	plane, c = p, p.Client
	ctrl.SetLogger(logrDiscard())
	// go-template-utils logs every failed template with klog; the tests fail
	// templates on purpose.
	klog.SetLogger(logrDiscard())
	_, stopped, err := hubtest.Run(ctx, plane.Config, hubtest.Options(func(o *hub.ManagerOptions) {
		o.StatusBatchDelay = 100 * time.Millisecond
	}))
	if err != nil {
		return err
	}
	go testkit.LogStop("manager", stopped)
	return nil
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

// decidedPlacement is the YAML of Placement pl of ns and of its one
// PlacementDecision, which decides clusters.
func decidedPlacement(ns string, clusters ...string) string {
	var decisions strings.Builder
	for _, cluster := range clusters {
		fmt.Fprintf(&decisions, "\n  - {clusterName: %s, reason: \"\"}", cluster)
	}
	return fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: pl, namespace: %[1]s}
spec: {}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: pl-decision-1
  namespace: %[1]s
  labels: {cluster.open-cluster-management.io/placement: pl}
status:
  decisions:%[2]s
`, ns, decisions.String())
}
