package spoke_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// cluster is the managed cluster of the tests: its namespace on the hub, and
// the namespace of the policy copies on the spoke.
const cluster = "cluster1"

var (
	hubC, spokeC client.Client
	// hubConfig reaches the hub, for tests that start a spoke of their own;
	// spokeConfig the managed cluster, for tests that read its API server's
	// metrics.
	hubConfig, spokeConfig *rest.Config
	// startSpoke starts a spoke controller between the hub and the spoke;
	// startSpokeWith does with the options changed by configure; stopSpoke
	// stops the running one.
	startSpoke     func() error
	startSpokeWith func(configure func(*spoke.ManagerOptions)) error
	stopSpoke      func()
)

func TestMain(m *testing.M) {
	os.Exit(testkit.RunPackage(m, start))
}

// start starts a hub and a spoke API server, the hub controller on the hub
// and the spoke controller between them, as in a real fleet.
func start(ctx context.Context) (stop func(), err error) {
	fleet, err := localplane.StartFleet(ctx, 1)
	if err != nil {
		return nil, err
	}
	var running sync.WaitGroup
	stop = func() {
		// Stop the controllers before their API servers.
		if stopSpoke != nil {
			stopSpoke()
		}
		running.Wait()
		_ = fleet.Stop()
	}
	hubC, spokeC = fleet.Hub.Client, fleet.Spokes[0].Client
	hubConfig, spokeConfig = fleet.Hub.Config, fleet.Spokes[0].Config
	if err := localplane.EnsureCluster(ctx, hubC, cluster); err != nil {
		return stop, err
	}
	ctrl.SetLogger(logr.Discard())

	_, hubStopped, err := hubtest.Run(ctx, fleet.Hub.Config, hubtest.Options(func(o *hub.ManagerOptions) {
		o.StatusBatchDelay = 100 * time.Millisecond
	}))
	if err != nil {
		return stop, err
	}
	running.Go(func() { testkit.LogStop("hub manager", hubStopped) })
	startSpokeWith = func(configure func(*spoke.ManagerOptions)) error {
		spokeCtx, cancelSpoke := context.WithCancel(ctx)
		stopped, err := spoketest.Run(spokeCtx, fleet.Hub.Config, fleet.Spokes[0].Config, spoketest.Options(cluster, configure))
		if err != nil {
			cancelSpoke()
			return err
		}
		var spokeRunning sync.WaitGroup
		spokeRunning.Go(func() { testkit.LogStop("spoke manager", stopped) })
		stopSpoke = func() { cancelSpoke(); spokeRunning.Wait() }
		return nil
	}
	startSpoke = func() error { return startSpokeWith(nil) }
	return stop, startSpoke()
}

// bindToCluster binds the named root policies of ns to the test cluster.
func bindToCluster(t *testing.T, ns string, policies ...string) {
	t.Helper()
	testkit.Apply(t, hubC, testkit.PlacementRuleBinding(ns, "to-cluster", []string{cluster}, policies...))
}

// configPolicy is a ConfigurationPolicy template checking a ConfigMap.
func configPolicy(name, action, complianceType, cmNamespace, cmName string) string {
	return fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: %s},
        spec: {remediationAction: %s, object-templates: [{complianceType: %s,
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {owner: fleetpolicy}}}]}}`,
		name, action, complianceType, cmName, cmNamespace)
}

// policyOf is a root policy with one template and the given spec.dependencies
// (YAML flow sequence, "" for none).
func policyOf(ns, name, template, dependencies string) string {
	deps := ""
	if dependencies != "" {
		deps = "\n  dependencies: " + dependencies
	}
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %s, namespace: %s}
spec:
  disabled: false%s
  policy-templates:
  - objectDefinition: %s
`, name, ns, deps, template)
}

// dependsOn is a flow sequence of one dependency on a Policy's compliance.
func dependsOn(policy string, state policyv1.ComplianceState) string {
	return fmt.Sprintf("[{apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: %s, compliance: %s}]", policy, state)
}

// configMap creates a ConfigMap as the policies of configPolicy want it.
func configMap(t *testing.T, ns, name string) {
	t.Helper()
	if err := localplane.EnsureNamespace(context.Background(), spokeC, ns); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"owner": "fleetpolicy"}}
	if err := spokeC.Create(context.Background(), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func deleteConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := spokeC.Delete(context.Background(), cm); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func exists(t *testing.T, c client.Client, obj client.Object) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// spokePolicy returns the copy of root policy ns/name on the spoke (nil if none).
func spokePolicy(t *testing.T, ns, name string) *policyv1.Policy {
	t.Helper()
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: ns + "." + name}}
	if !exists(t, spokeC, p) {
		return nil
	}
	return p
}

// hubReplica returns the replica of root policy ns/name on the hub (nil if none).
func hubReplica(t *testing.T, ns, name string) *policyv1.Policy {
	t.Helper()
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: ns + "." + name}}
	if !exists(t, hubC, p) {
		return nil
	}
	return p
}

func spokeConfigPolicy(t *testing.T, name string) *policyv1.ConfigurationPolicy {
	t.Helper()
	cp := &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	if !exists(t, spokeC, cp) {
		return nil
	}
	return cp
}

// newestMessage is the newest history message of template number i.
func newestMessage(p *policyv1.Policy, i int) string {
	if p == nil || i >= len(p.Status.Details) || p.Status.Details[i] == nil || len(p.Status.Details[i].History) == 0 {
		return ""
	}
	return p.Status.Details[i].History[0].Message
}

// expectCompliance waits until the spoke copy of each named root policy of ns
// has the given compliance.
func expectCompliance(t *testing.T, ns string, want map[string]policyv1.ComplianceState) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, fmt.Sprintf("compliance of %v", want), func() string {
		for name, state := range want {
			p := spokePolicy(t, ns, name)
			if p == nil {
				return name + " is not on the spoke"
			}
			if p.Status.ComplianceState != state {
				return fmt.Sprintf("%s is %q (%s), want %s", name, p.Status.ComplianceState, newestMessage(p, 0), state)
			}
		}
		return ""
	})
}
