package rollout

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	testingclock "k8s.io/utils/clock/testing"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clustersdkv1alpha1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// withLibraryClock runs fn with OCM's rollout library clock frozen at t and
// restores it afterwards. Tests only: it is the reference decide is held to, and
// it must not run in parallel with anything that calls the library.
func withLibraryClock(t time.Time, fn func()) {
	previous := clustersdkv1alpha1.RolloutClock
	clustersdkv1alpha1.RolloutClock = testingclock.NewFakeClock(t)
	defer func() { clustersdkv1alpha1.RolloutClock = previous }()
	fn()
}

// libraryAt is the library's own answer with its clock set to now.
func libraryAt(f *fleet, strategy clusterv1alpha1.RolloutStrategy, existing []clustersdkv1alpha1.ClusterRolloutStatus, now time.Time) (res clustersdkv1alpha1.RolloutResult, err error) {
	handler, err := clustersdkv1alpha1.NewRolloutHandler[struct{}](f.tracker(), nil)
	if err != nil {
		return res, err
	}
	withLibraryClock(now, func() { _, res, err = handler.GetRolloutCluster(strategy, existing) })
	return res, err
}

// resolvedRollout is the fleet and the resolved strategy of a valid rollout.
func resolvedRollout(t *testing.T, in PlanInput) (*fleet, Strategy) {
	t.Helper()
	f, err := newFleet(in.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	strategy, err := ResolveStrategy(in.Strategy, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, strategy
}

// randomExisting draws statuses for a random part of the fleet's clusters and a
// few clusters outside it: every library status, transition times unset or
// around the soaks and deadlines randomRollout draws (on, just before and just
// after each), and now and then a recheck time.
func randomExisting(rng *rand.Rand, f *fleet) []clustersdkv1alpha1.ClusterRolloutStatus {
	statuses := []clustersdkv1alpha1.RolloutStatus{
		clustersdkv1alpha1.Progressing, clustersdkv1alpha1.Succeeded, clustersdkv1alpha1.Failed,
		clustersdkv1alpha1.TimeOut, clustersdkv1alpha1.ToApply, clustersdkv1alpha1.Skip,
	}
	limits := []time.Duration{0, 90 * time.Second, 5 * time.Minute, 10 * time.Minute, time.Hour}
	names := append(slices.Clone(f.clusters), "gone-1", "gone-2")
	var out []clustersdkv1alpha1.ClusterRolloutStatus
	for _, name := range names {
		if rng.IntN(3) == 0 {
			continue
		}
		s := clustersdkv1alpha1.ClusterRolloutStatus{ClusterName: name, Status: statuses[rng.IntN(len(statuses))]}
		if g, inFleet := f.groupOf[name]; inFleet {
			s.GroupKey = f.libraryKey(g)
		}
		if rng.IntN(8) != 0 {
			ago := limits[rng.IntN(len(limits))] + time.Duration(rng.IntN(3)-1)*time.Second
			s.LastTransitionTime = timePtr(now.Add(-ago))
		}
		if rng.IntN(8) == 0 {
			s.RecheckTime = timePtr(now.Add(time.Minute))
		}
		out = append(out, s)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestDecideMatchesLibraryClock is the differential test of decide against OCM's
// rollout library run with its clock set to now: for seeded random fleets,
// strategies and statuses, both return the same result, field for field, while
// the library's clock reads another time during decide (decide does not depend
// on it).
func TestDecideMatchesLibraryClock(t *testing.T) {
	rng := rand.New(rand.NewPCG(20260301, 3))
	elsewhere := []time.Time{now.Add(-24 * time.Hour), now.Add(time.Hour), time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}
	timedOut, soaking := 0, 0
	for i := range 3000 {
		in := randomRollout(rng)
		f, strategy := resolvedRollout(t, in)
		spec := libraryStrategy(strategy, isProgressive(strategy, in.RemediationAction), f.mandatoryGroups(strategy.MandatoryDecisionGroups))
		if rng.IntN(50) == 0 {
			spec = strategy.Spec // as written, mandatory groups by name
		}
		existing := randomExisting(rng, f)

		want, wantErr := libraryAt(f, spec, slices.Clone(existing), now)
		var got clustersdkv1alpha1.RolloutResult
		var gotErr error
		withLibraryClock(elsewhere[i%len(elsewhere)], func() { got, gotErr = decide(f, spec, slices.Clone(existing), now) })
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: strategy %+v existing %+v\ndecide  %+v %v\nlibrary %+v %v", i, spec, existing, got, gotErr, want, wantErr)
		}
		timedOut += len(want.ClustersTimeOut)
		for _, c := range want.ClustersToRollout {
			if c.Status == clustersdkv1alpha1.Succeeded {
				soaking++
			}
		}
	}
	// The cases must reach the time-dependent branches, or the test proves little.
	if timedOut < 100 || soaking < 100 {
		t.Fatalf("too few cases reach the clock: %d timed out, %d soaking", timedOut, soaking)
	}
}

// TestDecideUnparsableDeadline checks that decide reports the library's error
// for a progressDeadline the library refuses.
func TestDecideUnparsableDeadline(t *testing.T) {
	f, err := newFleet(canaryFleet)
	if err != nil {
		t.Fatal(err)
	}
	spec := perGroup(clusterv1alpha1.RolloutConfig{ProgressDeadline: "1.5h"})
	existing := []clustersdkv1alpha1.ClusterRolloutStatus{{ClusterName: f.clusters[0], Status: clustersdkv1alpha1.Progressing, LastTransitionTime: timePtr(now)}}
	_, want := libraryAt(f, spec, slices.Clone(existing), now)
	_, got := decide(f, spec, existing, now)
	if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("decide error %v, library error %v", got, want)
	}
}

// TestStepsRunConcurrently runs steps of different rollouts at once (go test
// -race finds a shared write, such as a swap of the library's clock) and checks
// each gets the result it gets alone.
func TestStepsRunConcurrently(t *testing.T) {
	inputs := make([]StepInput, 8)
	want := make([]StepResult, len(inputs))
	for i := range inputs {
		inputs[i] = StepInput{
			Strategy:          progressive(intstr.FromInt32(int32(i+1)), clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5), ProgressDeadline: "10m"}),
			RemediationAction: "enforce", Generation: generation, Fleet: canaryFleet, Now: now.Add(time.Duration(i) * time.Minute),
			Clusters: []ClusterState{state(canaryFleet[0].Clusters[0], policyv1.RolloutProgressing, time.Duration(i)*3*time.Minute, "")},
		}
		var err error
		if want[i], err = Step(inputs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	got := make([]StepResult, len(inputs))
	for i := range inputs {
		wg.Go(func() {
			for range 20 {
				got[i], _ = Step(inputs[i])
			}
		})
	}
	wg.Wait()
	for i := range inputs {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("step %d: concurrent %+v, alone %+v", i, got[i], want[i])
		}
	}
}

// BenchmarkStepParallel runs BenchmarkStep's step from every CPU at once, as a
// hub does for several roots rolling out (--root-concurrency). Compare its ns/op
// at -cpu 1 and -cpu N: steps that ran one at a time would not get faster.
func BenchmarkStepParallel(b *testing.B) {
	in := bigStepInput()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := Step(in)
			if err != nil || len(res.Clusters) != 10000 {
				b.Fatal(err)
			}
		}
	})
}

// TestLibraryIdleDecidesNothing holds libraryIdle to OCM's rollout library: for
// seeded random rollouts that are not progressive, with every cluster of the
// fleet reached in one of the statuses Step hands the library and transition
// times before, at and after now, whenever libraryIdle says the library has
// nothing to decide, the library (through decide, as Step calls it) reaches no
// cluster, times none out, reports no breach and asks for no recheck. Cases on
// both sides of the answer are counted, so that the test cannot pass by never
// calling the library idle, nor by never meeting a case where the library
// decides something.
func TestLibraryIdleDecidesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261125, 18))
	applied := slices.Collect(maps.Values(appliedStatus))
	slices.Sort(applied)
	idle, busy := 0, 0
	for i := range 4000 {
		in := randomRollout(rng)
		f, strategy := resolvedRollout(t, in)
		progressive := isProgressive(strategy, in.RemediationAction)
		if progressive {
			continue
		}
		var existing []clustersdkv1alpha1.ClusterRolloutStatus
		for _, name := range f.clusters {
			if rng.IntN(40) == 0 {
				continue // not reached yet
			}
			existing = append(existing, clustersdkv1alpha1.ClusterRolloutStatus{
				ClusterName: name, GroupKey: f.libraryKey(f.groupOf[name]),
				Status:             applied[rng.IntN(len(applied))],
				LastTransitionTime: timePtr(now.Add(time.Duration(rng.IntN(5)-3) * 7 * time.Minute)),
			})
		}
		spec := libraryStrategy(strategy, false, nil)
		got, err := decide(f, spec, slices.Clone(existing), now)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		decidesSomething := len(got.ClustersTimeOut) > 0 || got.MaxFailureBreach || got.RecheckAfter != nil ||
			slices.ContainsFunc(got.ClustersToRollout, func(c clustersdkv1alpha1.ClusterRolloutStatus) bool {
				return c.Status == clustersdkv1alpha1.ToApply
			})
		if libraryIdle(false, strategy, len(f.clusters), existing, now) {
			idle++
			if decidesSomething {
				t.Fatalf("case %d: libraryIdle, but the library decides %+v for strategy %+v and %+v", i, got, spec, existing)
			}
		} else if decidesSomething {
			busy++
		}
	}
	if idle < 200 || busy < 200 {
		t.Fatalf("too few cases on one side: %d idle, %d where the library decides something", idle, busy)
	}
}
