package rollouttest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestReplicasCarryTheirClusterRolloutStatus: during a progressive rollout
// (maxConcurrency 2 over 6 clusters) each replica's status.rolloutStatus
// goes through what the root's status[] entry for its cluster goes through:
// ToApply until its wave (the first wave starts Progressing), Progressing,
// Succeeded; at the end each replica holds the root's value. The hub patches a
// replica only when its rollout status changes: the patches it counts
// (fleetpolicy_hub_replica_writes_total{verb="rolloutStatus"}) equal the
// changes a watch on the replicas sees (a patch that changed nothing would
// produce no watch event), so a rollout step adds no write per replica.
// About 5 s (1 s of it waiting for the hub to be quiet first).
func TestReplicasCarryTheirClusterRolloutStatus(t *testing.T) {
	startHub(t)
	// The hub reconciles the other tests' roots first; count from when it is quiet.
	before := settledRolloutStatusPatches(t)
	ns := "replica-status"
	seen := watchReplicaRolloutStatus(t, ns)
	spoke(t, ns, 300*time.Millisecond)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 2}}", fleet)
	waitRollout(t, ns, 6, policyv1.RolloutSucceeded)

	testkit.Eventually(t, 20*time.Second, "every replica Succeeded, as the root says", func() string {
		root := clusterRollout(testkit.RootStatus(t, c, ns, "p"))
		for _, cl := range fleet {
			r := &policyv1.Policy{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: cl, Name: replication.Name(ns, "p")}, r); err != nil {
				return err.Error()
			}
			if r.Status.RolloutStatus != policyv1.RolloutSucceeded || root[cl] != r.Status.RolloutStatus {
				return fmt.Sprintf("%s: replica %q, root %q", cl, r.Status.RolloutStatus, root[cl])
			}
		}
		return ""
	})
	time.Sleep(500 * time.Millisecond) // a redundant patch would come now
	changes := seen()
	total := 0
	for _, cl := range fleet {
		want := []policyv1.RolloutStatus{policyv1.RolloutToApply, policyv1.RolloutProgressing, policyv1.RolloutSucceeded}
		if cl == fleet[0] || cl == fleet[1] {
			want = want[1:] // the first wave is reached when its replicas are created
		}
		if got := changes[cl]; !slices.Equal(got, want) {
			t.Errorf("%s: replica rolloutStatus went %v, want %v", cl, got, want)
		}
		total += len(changes[cl])
	}
	if patches := rolloutStatusPatches(t) - before; patches != float64(total) {
		t.Errorf("the hub sent %v rolloutStatus patches for %d changes the replicas went through", patches, total)
	}
}

// watchReplicaRolloutStatus watches the replicas of root p in namespace ns and
// returns a function giving, per cluster, the rolloutStatus values each took
// in order (consecutive equal values once; an empty value not listed).
func watchReplicaRolloutStatus(t *testing.T, ns string) func() map[string][]policyv1.RolloutStatus {
	t.Helper()
	wc, err := client.NewWithWatch(plane.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := wc.Watch(ctx, &policyv1.PolicyList{}, client.MatchingLabels{replication.LabelRootPolicy: replication.Name(ns, "p")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	changes := map[string][]policyv1.RolloutStatus{}
	go func() {
		for e := range w.ResultChan() {
			r, ok := e.Object.(*policyv1.Policy)
			if !ok || e.Type == watch.Deleted || r.Status.RolloutStatus == "" {
				continue
			}
			mu.Lock()
			if got := changes[r.Namespace]; len(got) == 0 || got[len(got)-1] != r.Status.RolloutStatus {
				changes[r.Namespace] = append(got, r.Status.RolloutStatus)
			}
			mu.Unlock()
		}
	}()
	return func() map[string][]policyv1.RolloutStatus {
		mu.Lock()
		defer mu.Unlock()
		out := maps.Clone(changes)
		for k, v := range out {
			out[k] = slices.Clone(v)
		}
		return out
	}
}

// rolloutStatusPatches is the hub's count of replica rolloutStatus patches so far.
func rolloutStatusPatches(t *testing.T) float64 {
	t.Helper()
	return testkit.CounterSum(t, rolloutStatusWrites, rolloutStatusVerb)
}

// settledRolloutStatusPatches is that count once it has not moved for a second.
func settledRolloutStatusPatches(t *testing.T) float64 {
	t.Helper()
	return testkit.SettledCounterSum(t, rolloutStatusWrites, rolloutStatusVerb)
}

// The hub's replica write counter, and its label for rolloutStatus patches.
const rolloutStatusWrites = "fleetpolicy_hub_replica_writes_total"

var rolloutStatusVerb = map[string]string{"verb": "rolloutStatus"}
