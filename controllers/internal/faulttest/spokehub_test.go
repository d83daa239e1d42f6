package faulttest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// The spoke of TestSpokeCatchesUpAfterLosingItsHub: its cluster namespace on the
// hub, the namespace of its root policies, and the namespace on the managed
// cluster holding the ConfigMaps the policies check.
const (
	lostCluster = "lost-cluster"
	lostRoots   = "lost"
	lostData    = "lost-data"
)

// lostPolicy is a root policy of lostRoots whose ConfigurationPolicy informs
// whether ConfigMap lostData/configMap exists.
func lostPolicy(name, configMap string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  disabled: false
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %[1]s-cm}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: %[3]s, namespace: %[4]s}}
`, name, lostRoots, configMap, lostData)
}

// policyIn reads a policy; nil when it does not exist.
func policyIn(t *testing.T, c client.Client, namespace, name string) *policyv1.Policy {
	t.Helper()
	p := &policyv1.Policy{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, p)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// templateHistory is a policy's compliance history of its first template, newest first.
func templateHistory(p *policyv1.Policy) []policyv1.ComplianceHistory {
	if p == nil || len(p.Status.Details) == 0 || p.Status.Details[0] == nil {
		return nil
	}
	return p.Status.Details[0].History
}

// stateOf describes a policy's compliance for test messages and comparisons.
func stateOf(p *policyv1.Policy) string {
	if p == nil {
		return "missing"
	}
	newest := ""
	if h := templateHistory(p); len(h) > 0 {
		newest = h[0].Message
	}
	return fmt.Sprintf("%s (generation %d, observed %d, newest event %q)", p.Status.ComplianceState, p.Generation, p.Status.ObservedGeneration, newest)
}

// TestSpokeCatchesUpAfterLosingItsHub runs a hub and a spoke, each with its own
// API server and controller, the spoke reaching the hub through a test-only
// proxy. With several policies' status flowing, the proxy is cut. While the hub
// is away from the spoke: one policy turns NonCompliant on the managed cluster,
// another turns NonCompliant and back to Compliant, and a third is given a new
// template on the hub. When the proxy is restored, the hub's replicas and root
// status catch up with every change made on the managed cluster (the last
// state and each compliance event of the outage), the spoke's copy catches up
// with the hub's new spec, and the same spoke controller is still reconciling.
func TestSpokeCatchesUpAfterLosingItsHub(t *testing.T) {
	ctx := context.Background()
	managed, err := localplane.Start("spoke")
	testkit.FatalOrSkip(t, "starting the spoke API server", err)
	t.Cleanup(func() { _ = managed.Stop() })
	if err := localplane.EnsureCluster(ctx, plane.Client, lostCluster); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{lostRoots} {
		if err := localplane.EnsureNamespace(ctx, plane.Client, ns); err != nil {
			t.Fatal(err)
		}
	}
	if err := localplane.EnsureNamespace(ctx, managed.Client, lostData); err != nil {
		t.Fatal(err)
	}
	createConfigMap := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: lostData, Name: name}}
		if err := managed.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	deleteConfigMap := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: lostData, Name: name}}
		if err := managed.Client.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b", "c", "c-new"} {
		createConfigMap(name)
	}

	hubURL, err := url.Parse(plane.Host())
	if err != nil {
		t.Fatal(err)
	}
	proxy := startHubProxy(t, hubURL.Host)
	hubThroughProxy := rest.CopyConfig(plane.Config)
	hubThroughProxy.Host = "https://" + proxy.addr
	startHub(t, false)
	running := spoketest.Start(t, hubThroughProxy, managed.Config, lostCluster)

	policies := []string{"a", "b", "c"}
	testkit.Apply(t, plane.Client, lostPolicy("a", "a")+"---"+lostPolicy("b", "b")+"---"+lostPolicy("c", "c")+"---"+
		testkit.PlacementRuleBinding(lostRoots, "to-lost", []string{lostCluster}, policies...))

	replica := func(name string) *policyv1.Policy {
		return policyIn(t, plane.Client, lostCluster, replication.Name(lostRoots, name))
	}
	copyOnSpoke := func(name string) *policyv1.Policy {
		return policyIn(t, managed.Client, lostCluster, replication.Name(lostRoots, name))
	}
	// onHub waits until each replica is current (evaluated for its generation)
	// with the given compliance, and the root policy's status says the same.
	onHub := func(what string, want map[string]policyv1.ComplianceState) {
		t.Helper()
		testkit.Eventually(t, 45*time.Second, what, func() string {
			for name, state := range want {
				r := replica(name)
				if r == nil || r.Status.ComplianceState != state || r.Status.ObservedGeneration != r.Generation {
					return fmt.Sprintf("replica %s is %s, want %s", name, stateOf(r), state)
				}
				root := policyIn(t, plane.Client, lostRoots, name)
				if i := slices.IndexFunc(root.Status.Status, func(s *policyv1.CompliancePerClusterStatus) bool {
					return s != nil && s.ClusterName == lostCluster
				}); i < 0 || root.Status.Status[i].ComplianceState != state {
					return fmt.Sprintf("root %s reports %+v for the cluster, want %s", name, root.Status.Status, state)
				}
			}
			return ""
		})
	}
	// onSpoke waits until the spoke's copies have the given compliance.
	onSpoke := func(what string, want map[string]policyv1.ComplianceState) {
		t.Helper()
		testkit.Eventually(t, 30*time.Second, what, func() string {
			for name, state := range want {
				if p := copyOnSpoke(name); p == nil || p.Status.ComplianceState != state {
					return fmt.Sprintf("copy %s is %s, want %s", name, stateOf(p), state)
				}
			}
			return ""
		})
	}
	onHub("status flows before the outage", map[string]policyv1.ComplianceState{
		"a": policyv1.Compliant, "b": policyv1.Compliant, "c": policyv1.Compliant,
	})
	observedBefore := map[string]int64{}
	for _, name := range policies {
		observedBefore[name] = replica(name).Status.ObservedGeneration
	}
	generationC := replica("c").Generation

	proxy.Cut()
	outage := time.Now()
	deleteConfigMap("a")
	deleteConfigMap("b")
	onSpoke("a and b NonCompliant on the spoke during the outage", map[string]policyv1.ComplianceState{
		"a": policyv1.NonCompliant, "b": policyv1.NonCompliant,
	})
	createConfigMap("b")
	onSpoke("b Compliant again on the spoke during the outage", map[string]policyv1.ComplianceState{"b": policyv1.Compliant})
	testkit.Apply(t, plane.Client, lostPolicy("c", "c-new"))
	testkit.Eventually(t, 30*time.Second, "the hub gives c's replica the new template", func() string {
		if r := replica("c"); r.Generation == generationC {
			return "replica c is still at generation " + fmt.Sprint(generationC)
		}
		return ""
	})
	// Let the spoke's writes to the hub fail for a while (and back off).
	time.Sleep(3 * time.Second)
	for _, name := range policies {
		if r := replica(name); r.Status.ComplianceState != policyv1.Compliant || r.Status.ObservedGeneration != observedBefore[name] {
			t.Fatalf("the proxy did not keep the spoke from the hub: replica %s is %s", name, stateOf(r))
		}
	}
	if strings.Contains(string(copyOnSpoke("c").Spec.PolicyTemplates[0].ObjectDefinition.Raw), "c-new") {
		t.Fatal("the proxy did not keep the spoke from the hub: c's new template reached the spoke")
	}

	proxy.Restore(t)
	onHub("the hub catches up after the outage", map[string]policyv1.ComplianceState{
		"a": policyv1.NonCompliant, "b": policyv1.Compliant, "c": policyv1.Compliant,
	})
	// Nothing lost: b's NonCompliant event of the outage reaches the hub, before
	// its newer Compliant one (the history may follow the compliance by a
	// status write).
	testkit.Eventually(t, 30*time.Second, "b's compliance events of the outage reach the hub", func() string {
		b := templateHistory(replica("b"))
		nonCompliantAt := slices.IndexFunc(b, func(h policyv1.ComplianceHistory) bool {
			at, ok := history.TimeOf(h.EventName)
			return ok && at.After(outage) && strings.HasPrefix(h.Message, string(policyv1.NonCompliant)+";")
		})
		if len(b) == 0 || !strings.HasPrefix(b[0].Message, string(policyv1.Compliant)+";") || nonCompliantAt < 1 {
			return fmt.Sprintf("history %+v", b)
		}
		return ""
	})
	if h := templateHistory(replica("a")); len(h) == 0 || !strings.HasPrefix(h[0].Message, string(policyv1.NonCompliant)+";") {
		t.Fatalf("a's NonCompliant event did not reach the hub: %+v", h)
	}
	// The spoke caught up with the hub's spec: c's replica reports its new
	// generation (onHub) evaluated with the new template.
	if r := replica("c"); r.Generation == generationC || len(templateHistory(r)) == 0 || !strings.Contains(templateHistory(r)[0].Message, "[c-new]") {
		t.Fatalf("c's new template was not evaluated on the spoke: %s", stateOf(r))
	}

	// The same spoke controller is still running and reconciling.
	createConfigMap("a")
	onHub("a Compliant again after the outage", map[string]policyv1.ComplianceState{"a": policyv1.Compliant})
	if stopped, err := running.Stopped(); stopped {
		t.Fatalf("the spoke controller stopped: %v", err)
	}
}
