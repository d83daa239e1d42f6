package rollouttest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

var (
	plane *localplane.Plane
	c     client.Client
)

var fleet = []string{"c-1", "c-2", "c-3", "c-4", "c-5", "c-6"}

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testkit.RunWithPlane(m, "hub", fleet, func(_ context.Context, p *localplane.Plane) error {
		plane, c = p, p.Client
		return nil
	}))
}

// startHub runs a hub controller until the returned stop is called (or the test
// ends).
func startHub(t *testing.T) (stop func()) {
	t.Helper()
	return hubtest.Start(t, plane.Config, nil).Stop
}

// rolloutPolicy applies an enforce Policy with the given rolloutStrategy, bound
// to Placement "pl" whose decision groups are given (group name -> clusters, in
// index order).
func rolloutPolicy(t *testing.T, ns, strategy string, groups ...[]string) {
	t.Helper()
	// Decisions first: a policy bound to no cluster yet has nothing to roll out
	// and its rollout would count as Succeeded.
	for i, g := range groups {
		setGroup(t, ns, i, groupName(i), g...)
	}
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: p, namespace: %s}
spec:
  disabled: false
  remediationAction: enforce
  rolloutStrategy: %s
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: p}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: default}}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: pl, namespace: %s}
spec: {}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: %s}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}]
`, ns, strategy, ns, ns))
}

func groupName(i int) string {
	if i == 0 {
		return "canary"
	}
	return fmt.Sprintf("wave-%d", i)
}

// setGroup writes the PlacementDecision of one decision group, as OCM's
// placement controller labels it.
func setGroup(t *testing.T, ns string, index int, name string, clusters ...string) {
	t.Helper()
	decisions := ""
	for _, cl := range clusters {
		decisions += fmt.Sprintf("\n  - {clusterName: %s, reason: \"\"}", cl)
	}
	if decisions == "" {
		decisions = " []"
	}
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: pl-decision-%d
  namespace: %s
  labels:
    %s: pl
    %s: "%d"
    %s: %s
status:
  decisions:%s
`, index, ns, clusterv1beta1.PlacementLabel, clusterv1beta1.DecisionGroupIndexLabel, index,
		clusterv1beta1.DecisionGroupNameLabel, name, decisions))
}

func clusterRollout(s policyv1.PolicyStatus) map[string]policyv1.RolloutStatus {
	out := map[string]policyv1.RolloutStatus{}
	for _, e := range s.Status {
		out[e.ClusterName] = e.RolloutStatus
	}
	return out
}

// waitRollout waits for the root's rolloutStatus over a fleet of n clusters (an
// empty fleet has trivially succeeded).
func waitRollout(t *testing.T, ns string, n int, want policyv1.RolloutStatus) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, "root rolloutStatus "+string(want), func() string {
		if s := testkit.RootStatus(t, c, ns, "p"); s.RolloutStatus != want || len(s.Status) != n {
			return fmt.Sprintf("rolloutStatus %q, clusters %v", s.RolloutStatus, clusterRollout(s))
		}
		return ""
	})
}

func spoke(t *testing.T, ns string, delay time.Duration) *fakeSpoke {
	t.Helper()
	return spokeOnWire(t, ns, delay, fleetpolicyWire)
}

// spokeOnWire is spoke reporting in the given status format.
func spokeOnWire(t *testing.T, ns string, delay time.Duration, w wire) *fakeSpoke {
	t.Helper()
	f := newFakeSpoke(c, ns, "p", delay)
	f.wire = w
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go f.run(ctx)
	return f
}

// assertWaves checks that clusters were first enforced wave by wave: every
// cluster of wave k before any cluster of wave k+1 (order within a wave is free).
func assertWaves(t *testing.T, got []string, waves ...[]string) {
	t.Helper()
	pos := 0
	for k, wave := range waves {
		if pos+len(wave) > len(got) {
			t.Fatalf("enforced %v, want waves %v", got, waves)
		}
		seg := slices.Clone(got[pos : pos+len(wave)])
		slices.Sort(seg)
		w := slices.Clone(wave)
		slices.Sort(w)
		if !slices.Equal(seg, w) {
			t.Fatalf("wave %d enforced %v, want %v (order %v)", k, seg, w, got)
		}
		pos += len(wave)
	}
	if pos != len(got) {
		t.Fatalf("enforced %v beyond the waves %v", got, waves)
	}
}

func assertEnforcedOnce(t *testing.T, f *fakeSpoke) {
	t.Helper()
	for cl, n := range f.switchCounts() {
		if n != 1 {
			t.Errorf("cluster %s was switched to enforce %d times", cl, n)
		}
	}
}

func TestProgressiveMaxConcurrency2Over6Clusters(t *testing.T) {
	startHub(t)
	ns := "progressive"
	f := spoke(t, ns, 300*time.Millisecond)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 2}}", fleet)
	waitRollout(t, ns, 6, policyv1.RolloutSucceeded)
	assertWaves(t, f.enforcedOrder(), fleet[0:2], fleet[2:4], fleet[4:6])
	assertEnforcedOnce(t, f)
	for cl, st := range clusterRollout(testkit.RootStatus(t, c, ns, "p")) {
		if st != policyv1.RolloutSucceeded {
			t.Errorf("%s: rolloutStatus %s", cl, st)
		}
	}
}

// TestOneClusterAtATimeKeepsPace: six waves of one cluster each complete, and
// no step is requeued through the rate limiter. Every wave changes the root's
// status several times; requeued through the limiter, the backoff doubles with
// every change that follows another without a quiet reconcile between them,
// and at a thousand clusters a rollout stalled for minutes between waves.
func TestOneClusterAtATimeKeepsPace(t *testing.T) {
	startHub(t)
	limited := rateLimitedRequeues(t)
	t.Cleanup(func() {
		if n := rateLimitedRequeues(t) - limited; n != 0 {
			t.Errorf("the propagator requeued %v step(s) through the rate limiter", n)
		}
	})
	ns := "one-at-a-time"
	f := spoke(t, ns, 20*time.Millisecond)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 1}}", fleet)
	waitRollout(t, ns, 6, policyv1.RolloutSucceeded)
	waves := make([][]string, len(fleet))
	for i := range fleet {
		waves[i] = fleet[i : i+1]
	}
	assertWaves(t, f.enforcedOrder(), waves...)
	assertEnforcedOnce(t, f)
}

// rateLimitedRequeues is how many reconciles of the propagator so far asked to
// be requeued through the rate limiter (controller-runtime's result "requeue").
func rateLimitedRequeues(t *testing.T) float64 {
	t.Helper()
	return testkit.CounterSum(t, "controller_runtime_reconcile_total", map[string]string{"controller": "propagator", "result": "requeue"})
}

func TestProgressivePerGroupMandatoryCanary(t *testing.T) {
	startHub(t)
	ns := "per-group"
	f := spoke(t, ns, 200*time.Millisecond)
	rolloutPolicy(t, ns, "{type: ProgressivePerGroup, progressivePerGroup: {mandatoryDecisionGroups: [{groupName: canary}]}}",
		fleet[:1], fleet[1:4], fleet[4:])
	waitRollout(t, ns, 6, policyv1.RolloutSucceeded)
	assertWaves(t, f.enforcedOrder(), fleet[:1], fleet[1:4], fleet[4:])
	assertEnforcedOnce(t, f)
}

func TestFailureBreachStopsTheRollout(t *testing.T) {
	startHub(t)
	ns := "breach"
	f := spoke(t, ns, 100*time.Millisecond)
	f.set("c-2", failing)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 1, maxFailures: 0}}", fleet)
	waitRollout(t, ns, 6, policyv1.RolloutFailed)
	time.Sleep(time.Second) // nothing else may be enforced while the breach holds
	if got := f.enforcedOrder(); !slices.Equal(got, fleet[:2]) {
		t.Fatalf("enforced %v after the breach, want only %v", got, fleet[:2])
	}
	st := clusterRollout(testkit.RootStatus(t, c, ns, "p"))
	if st["c-1"] != policyv1.RolloutSucceeded || st["c-2"] != policyv1.RolloutFailed || st["c-3"] != policyv1.RolloutToApply {
		t.Fatalf("cluster rollout statuses %v", st)
	}
}

func TestProgressDeadlineTimesOutASilentCluster(t *testing.T) {
	startHub(t)
	ns := "timeout"
	f := spoke(t, ns, 0)
	f.set("c-1", silent)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 1, maxFailures: 1, progressDeadline: 2s}}", fleet[:3])
	testkit.Eventually(t, 30*time.Second, "c-1 TimeOut, rollout moved on", func() string {
		st := clusterRollout(testkit.RootStatus(t, c, ns, "p"))
		if st["c-1"] != policyv1.RolloutTimeOut || st["c-3"] != policyv1.RolloutSucceeded {
			return fmt.Sprintf("%v", st)
		}
		return ""
	})
	waitRollout(t, ns, 3, policyv1.RolloutFailed) // ended with a timed-out cluster
	assertWaves(t, f.enforcedOrder(), fleet[:1], fleet[1:2], fleet[2:3])
}

func TestMinSuccessTimeSoaksEachWave(t *testing.T) {
	startHub(t)
	ns := "soak"
	f := spoke(t, ns, 0)
	soak := 2 * time.Second
	rolloutPolicy(t, ns, "{type: ProgressivePerGroup, progressivePerGroup: {minSuccessTime: 2s}}", fleet[:2], fleet[2:4])
	testkit.Eventually(t, 30*time.Second, "first wave succeeded", func() string {
		st := clusterRollout(testkit.RootStatus(t, c, ns, "p"))
		if st["c-1"] != policyv1.RolloutSucceeded || st["c-2"] != policyv1.RolloutSucceeded {
			return fmt.Sprintf("%v", st)
		}
		return ""
	})
	succeeded := time.Now()
	testkit.Eventually(t, 30*time.Second, "second wave enforced", func() string {
		if len(f.enforcedOrder()) < 4 {
			return fmt.Sprintf("enforced %v", f.enforcedOrder())
		}
		return ""
	})
	// The soak counts from the wave's success as the hub recorded it; allow for
	// the poll that observed it.
	if waited := time.Since(succeeded); waited < soak-500*time.Millisecond {
		t.Fatalf("second wave started %v after the first succeeded, want at least the %v soak", waited, soak)
	}
	waitRollout(t, ns, 4, policyv1.RolloutSucceeded)
}

func TestClusterAddedDuringAndAfterRollout(t *testing.T) {
	startHub(t)
	ns := "joiners"
	f := spoke(t, ns, 300*time.Millisecond)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 1}}", fleet[:3])
	testkit.Eventually(t, 30*time.Second, "rollout under way", func() string {
		if len(f.enforcedOrder()) == 0 {
			return "nothing enforced yet"
		}
		return ""
	})
	setGroup(t, ns, 0, "canary", fleet[:4]...) // c-4 joins during the rollout
	waitRollout(t, ns, 4, policyv1.RolloutSucceeded)
	assertWaves(t, f.enforcedOrder(), fleet[0:1], fleet[1:2], fleet[2:3], fleet[3:4])

	setGroup(t, ns, 0, "canary", fleet[:5]...) // c-5 joins after it succeeded
	testkit.Eventually(t, 30*time.Second, "a miniature rollout for c-5", func() string {
		st := testkit.RootStatus(t, c, ns, "p")
		if len(f.enforcedOrder()) != 5 || st.RolloutStatus != policyv1.RolloutSucceeded || clusterRollout(st)["c-5"] != policyv1.RolloutSucceeded {
			return fmt.Sprintf("enforced %v, root %s, clusters %v", f.enforcedOrder(), st.RolloutStatus, clusterRollout(st))
		}
		return ""
	})
	assertEnforcedOnce(t, f)
}

// TestHubRestartedMidRolloutResumes stops the hub controller in the middle of a
// rollout, several times, and starts a new one: the rollout completes with every
// cluster enforced exactly once, in wave order.
func TestHubRestartedMidRolloutResumes(t *testing.T) {
	ns := "restart"
	f := spoke(t, ns, 400*time.Millisecond)
	stop := startHub(t)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 1}}", fleet)
	for restarts := 0; restarts < 3; restarts++ {
		n := len(f.enforcedOrder())
		testkit.Eventually(t, 30*time.Second, "progress before the restart", func() string {
			if len(f.enforcedOrder()) <= n {
				return fmt.Sprintf("enforced %v", f.enforcedOrder())
			}
			return ""
		})
		stop()
		time.Sleep(300 * time.Millisecond)
		stop = startHub(t)
	}
	waitRollout(t, ns, 6, policyv1.RolloutSucceeded)
	assertWaves(t, f.enforcedOrder(), fleet[0:1], fleet[1:2], fleet[2:3], fleet[3:4], fleet[4:5], fleet[5:6])
	assertEnforcedOnce(t, f)
}

// TestRolloutPlanDivergence applies a RolloutPlan to the hub (as plan-rollout
// writes it, without local-config): the root reports whether the live waves
// still follow it, with a condition, and an Event when they diverge.
func TestRolloutPlanDivergence(t *testing.T) {
	startHub(t)
	ns := "planned"
	spoke(t, ns, 100*time.Millisecond)
	plan := func(waves ...[]string) string {
		doc := fmt.Sprintf(`
apiVersion: fleetpolicy.io/v1alpha1
kind: RolloutPlan
metadata: {name: p, namespace: %s}
spec:
  policyRef: {name: p, namespace: %s}
  strategy: {type: Progressive}
  clusters: []
  waves:`, ns, ns)
		for i, w := range waves {
			doc += fmt.Sprintf("\n  - {index: %d, clusters: [%s], decisionGroups: [], mandatory: false, notBefore: 0s}", i, strings.Join(w, ", "))
		}
		return doc
	}
	testkit.Apply(t, c, plan(fleet[0:2], fleet[2:4]))
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 2}}", fleet[:4])
	condition := func() (string, string) {
		for _, c := range testkit.RootStatus(t, c, ns, "p").Conditions {
			if c.Type == hub.ConditionRolloutPlanMatches {
				return string(c.Status), c.Message
			}
		}
		return "", ""
	}
	testkit.Eventually(t, 30*time.Second, "the plan matches", func() string {
		if s, msg := condition(); s != "True" {
			return s + " " + msg
		}
		return ""
	})
	testkit.Apply(t, c, plan(fleet[0:1], fleet[1:4]))
	testkit.Eventually(t, 30*time.Second, "the plan diverges", func() string {
		if s, msg := condition(); s != "False" || !strings.Contains(msg, "wave 0: planned [c-1], live [c-1 c-2]") {
			return s + " " + msg
		}
		return ""
	})
}

// TestProgressiveOnOCMAddonReports: a Progressive rollout completes over
// clusters that report as OCM's framework add-on does (no observedGeneration,
// only the compliance history), wave by wave.
func TestProgressiveOnOCMAddonReports(t *testing.T) {
	startHub(t)
	ns := "progressive-ocm"
	f := spokeOnWire(t, ns, 300*time.Millisecond, ocmWire)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 2}}", fleet)
	waitRollout(t, ns, 6, policyv1.RolloutSucceeded)
	assertWaves(t, f.enforcedOrder(), fleet[0:2], fleet[2:4], fleet[4:6])
	assertEnforcedOnce(t, f)
}

// TestAllWithDeadlineOnOCMAddonReports: an All rollout with a progressDeadline
// over OCM add-on reports ends Succeeded when every cluster is Compliant (it
// ended TimeOut when the hub waited for an observedGeneration).
func TestAllWithDeadlineOnOCMAddonReports(t *testing.T) {
	startHub(t)
	ns := "all-ocm"
	spokeOnWire(t, ns, 300*time.Millisecond, ocmWire)
	rolloutPolicy(t, ns, "{type: All, all: {progressDeadline: 20s}}", fleet[:3])
	waitRollout(t, ns, 3, policyv1.RolloutSucceeded)
}

// TestStaleOCMAddonReportNeverCounts: a cluster whose add-on reports Compliant
// only from an evaluation before the rollout reached it stays Progressing, and
// the rollout does not move on to the next wave.
func TestStaleOCMAddonReportNeverCounts(t *testing.T) {
	startHub(t)
	ns := "stale-ocm"
	f := spokeOnWire(t, ns, 0, staleOCMWire)
	rolloutPolicy(t, ns, "{type: Progressive, progressive: {maxConcurrency: 1}}", fleet[:2])
	testkit.Eventually(t, 30*time.Second, "first cluster enforced", func() string {
		if got := f.enforcedOrder(); len(got) == 0 {
			return "no cluster enforced yet"
		}
		return ""
	})
	// Give the hub time to (wrongly) count the stale Compliant report.
	time.Sleep(3 * time.Second)
	if got := f.enforcedOrder(); len(got) != 1 {
		t.Fatalf("enforced %v: a stale report moved the rollout to the next wave", got)
	}
	first := f.enforcedOrder()[0]
	if st := clusterRollout(testkit.RootStatus(t, c, ns, "p"))[first]; st != policyv1.RolloutProgressing {
		t.Fatalf("%s: rolloutStatus %s on a report older than the rollout, want Progressing", first, st)
	}
}
