package spoke_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestSelfManagedHubReplicaIsItsOwnCopy runs a spoke whose managed cluster is
// the hub itself (a self-managed hub, OCM's local-cluster; `make e2e` runs
// this way): the replica is its own copy, so spec sync leaves it alone. The
// policy is enforced and goes Compliant, and the replica is not rewritten
// over and over: spec sync once wrote fleetpolicy.io/hub-generation on it and
// the hub, which writes a replica's annotations as its root's, removed it,
// some hundred times a second.
func TestSelfManagedHubReplicaIsItsOwnCopy(t *testing.T) {
	const self = "self-managed"
	ctx := context.Background()
	if err := localplane.EnsureCluster(ctx, hubC, self); err != nil {
		t.Fatal(err)
	}
	spoketest.Start(t, hubConfig, hubConfig, self)
	ns := "self-managed-policies"
	testkit.Apply(t, hubC, policyOf(ns, "p", configPolicy("p", "enforce", "musthave", "default", "self-managed"), ""))
	testkit.Apply(t, hubC, testkit.PlacementRuleBinding(ns, "to-self", []string{self}, "p"))
	testkit.Eventually(t, time.Minute, "root Compliant", func() string {
		if s := testkit.RootStatus(t, hubC, ns, "p"); s.ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("compliance %q, clusters %v", s.ComplianceState, s.Status)
		}
		return ""
	})
	replica := &policyv1.Policy{}
	testkit.Get(t, hubC, self, ns+".p", replica)
	if g, ok := replica.Annotations["fleetpolicy.io/hub-generation"]; ok {
		t.Errorf("the replica carries a copy's annotation fleetpolicy.io/hub-generation=%s", g)
	}
	w, err := client.NewWithWatch(hubConfig, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := w.Watch(ctx, &policyv1.PolicyList{}, client.InNamespace(self))
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	writes := 0
	deadline := time.After(2 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-watcher.ResultChan():
			if ev.Type == watch.Modified {
				writes++
			}
		case <-deadline:
			done = true
		}
	}
	if writes > 3 {
		t.Errorf("the replica was written %d times in 2 s once Compliant", writes)
	}
}
