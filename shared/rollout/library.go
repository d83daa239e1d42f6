package rollout

import (
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clustersdkv1alpha1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// decide runs OCM's rollout library once over the fleet, at now, and returns what
// the library returns when its clock reads now.
//
// The library has no parameter for the time: it reads its package variable
// RolloutClock, which this package leaves alone, so that steps of different
// rollouts run in parallel. The clock decides only two things in the library,
// both from a cluster's LastTransitionTime: whether a Succeeded cluster still
// soaks (minSuccessTime) and whether a Progressing or Failed one has timed out
// (progressDeadline). decide answers both at now (atNow) and hands the library a
// transition time so far in the past or the future that its own reading of the
// clock gives the same answer, whatever that reading is; then it puts the real
// transition times back and computes RecheckAfter at now. The library keeps
// every other choice: which clusters, how many, in which order, maxFailures.
// TestDecideMatchesLibraryClock holds decide to the library run with its clock
// set to now.
func decide(f *fleet, strategy clusterv1alpha1.RolloutStrategy, existing []clustersdkv1alpha1.ClusterRolloutStatus, now time.Time) (clustersdkv1alpha1.RolloutResult, error) {
	// The handler never calls its status function: the caller computes the
	// existing statuses, as here.
	handler, err := clustersdkv1alpha1.NewRolloutHandler[struct{}](f.tracker(), nil)
	if err != nil {
		return clustersdkv1alpha1.RolloutResult{}, err
	}
	soak, deadline, parsed := libraryDurations(strategy)

	byName := make(map[string]clustersdkv1alpha1.ClusterRolloutStatus, len(existing))
	given := make([]clustersdkv1alpha1.ClusterRolloutStatus, len(existing))
	for i, s := range existing {
		byName[s.ClusterName] = s
		given[i] = s
		if parsed {
			given[i].LastTransitionTime = clockFreeTransition(s, soak, deadline, now)
		}
	}

	_, result, err := handler.GetRolloutCluster(strategy, given)
	if err != nil || !parsed {
		// With a duration the library cannot parse it fails before reading
		// the clock.
		return result, err
	}
	for _, list := range [][]clustersdkv1alpha1.ClusterRolloutStatus{result.ClustersToRollout, result.ClustersTimeOut} {
		for i := range list {
			restoreTimes(&list[i], byName, soak, deadline, now)
		}
	}
	// The library returns the removed clusters as it was given them.
	for i := range result.ClustersRemoved {
		result.ClustersRemoved[i].LastTransitionTime = byName[result.ClustersRemoved[i].ClusterName].LastTransitionTime
	}
	result.RecheckAfter = recheckAfter(result.ClustersToRollout, now)
	return result, nil
}

// libraryIdle reports whether the library has nothing to decide in a step
// that is not progressive, so that Step need not call it: every one of the
// fleet's clusters has been reached (existing holds all of them), no
// progressDeadline can time one out, and no success lies after now. The
// library then rolls out All with the whole fleet as maxFailures and no soak,
// so it returns no cluster to reach, none timed out, no maxFailures breach
// and no recheck. This is the settled state of every policy without a
// progressive rollout, in which replicas report compliance over and over:
// the library's check for removed clusters takes time quadratic in the
// fleet's size, and would be paid on every report.
// TestLibraryIdleDecidesNothing holds this to the library's own answer.
func libraryIdle(progressive bool, s Strategy, clusters int, existing []clustersdkv1alpha1.ClusterRolloutStatus, now time.Time) bool {
	if progressive || s.ProgressDeadline != nil || len(existing) != clusters {
		return false
	}
	for _, c := range existing {
		if c.Status == clustersdkv1alpha1.Succeeded && c.LastTransitionTime != nil && c.LastTransitionTime.After(now) {
			return false
		}
	}
	return true
}

// libraryUnlimited is the library's duration for "no limit" (progressDeadline
// None or empty): a cluster with it has no recheck time.
const libraryUnlimited = time.Duration(math.MaxInt64)

// libraryDurations are the minSuccessTime and progressDeadline the library reads
// from the strategy, parsed as it parses them; parsed is false when the library
// would refuse the progressDeadline.
func libraryDurations(strategy clusterv1alpha1.RolloutStrategy) (soak, deadline time.Duration, parsed bool) {
	var config clusterv1alpha1.RolloutConfig
	switch {
	case strategy.Type == clusterv1alpha1.All && strategy.All != nil:
		// All ignores minSuccessTime.
		config.ProgressDeadline = strategy.All.ProgressDeadline
	case strategy.Type == clusterv1alpha1.Progressive && strategy.Progressive != nil:
		config = strategy.Progressive.RolloutConfig
	case strategy.Type == clusterv1alpha1.ProgressivePerGroup && strategy.ProgressivePerGroup != nil:
		config = strategy.ProgressivePerGroup.RolloutConfig
	}
	parsedDeadline, err := parseProgressDeadline(config.ProgressDeadline)
	if err != nil {
		return 0, 0, false
	}
	deadline = libraryUnlimited
	if parsedDeadline != nil {
		deadline = *parsedDeadline
	}
	return config.MinSuccessTime.Duration, deadline, true
}

// libraryPast and libraryFuture are transition times that put a soak or deadline
// of any length (at most about 292 years) before, respectively after, any time
// the library's clock reads today.
var (
	libraryPast   = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	libraryFuture = time.Date(9000, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// clockFreeTransition is the transition time to give the library for s so that
// it decides at any clock reading what it decides at now.
func clockFreeTransition(s clustersdkv1alpha1.ClusterRolloutStatus, soak, deadline time.Duration, now time.Time) *metav1.Time {
	limit, timed := limitOf(s.Status, soak, deadline)
	if !timed {
		return s.LastTransitionTime
	}
	end, running := atNow(s.LastTransitionTime, limit, now)
	switch {
	case end == nil:
		return s.LastTransitionTime // unlimited: the library reads no time
	case running:
		return &metav1.Time{Time: libraryFuture}
	default:
		return &metav1.Time{Time: libraryPast}
	}
}

// limitOf is the duration counted from a cluster's transition time: the soak
// for Succeeded, the deadline for the statuses the library times out
// (Progressing, Failed and any it does not know); timed is false for the
// statuses it reads no time for (ToApply, TimeOut, Skip).
func limitOf(status clustersdkv1alpha1.RolloutStatus, soak, deadline time.Duration) (limit time.Duration, timed bool) {
	switch status {
	case clustersdkv1alpha1.ToApply, clustersdkv1alpha1.TimeOut, clustersdkv1alpha1.Skip:
		return 0, false
	case clustersdkv1alpha1.Succeeded:
		return soak, true
	default:
		return deadline, true
	}
}

// atNow is the end of a soak or deadline of length limit from start (now when
// start is unset), nil when limit is unlimited, and whether it is still running
// at now.
func atNow(start *metav1.Time, limit time.Duration, now time.Time) (end *metav1.Time, running bool) {
	if limit == libraryUnlimited {
		return nil, false
	}
	from := now
	if start != nil {
		from = start.Time
	}
	end = &metav1.Time{Time: from.Add(limit)}
	return end, now.Before(end.Time)
}

// restoreTimes gives a cluster the library returned its transition time back,
// and the recheck time the library computes from it.
func restoreTimes(s *clustersdkv1alpha1.ClusterRolloutStatus, byName map[string]clustersdkv1alpha1.ClusterRolloutStatus, soak, deadline time.Duration, now time.Time) {
	in, known := byName[s.ClusterName]
	if !known {
		return // a cluster the library chose, not one it was given
	}
	// Only the clusters the library reads a time for were given another one
	// (the library makes up a fresh entry for a cluster given as ToApply).
	// It sets their recheck time: the end of the soak or of the deadline.
	if limit, timed := limitOf(in.Status, soak, deadline); timed {
		s.LastTransitionTime = in.LastTransitionTime
		s.RecheckTime, _ = atNow(in.LastTransitionTime, limit, now)
	}
}

// recheckAfter is the library's RecheckAfter at now: the shortest positive time
// to a recheck time of the clusters to roll out.
func recheckAfter(clusters []clustersdkv1alpha1.ClusterRolloutStatus, now time.Time) *time.Duration {
	var shortest *time.Duration
	for _, c := range clusters {
		if c.RecheckTime == nil {
			continue
		}
		if d := c.RecheckTime.Sub(now); d > 0 && (shortest == nil || d < *shortest) {
			shortest = &d
		}
	}
	return shortest
}

// appliedStatus maps the statuses of a cluster the rollout has reached onto the
// library's integer enum. Only these are handed to the library: a cluster not
// reached yet is left out, so that the library picks it in name order (given as
// ToApply it would take a slot ahead of clusters already in flight).
var appliedStatus = map[policyv1.RolloutStatus]clustersdkv1alpha1.RolloutStatus{
	policyv1.RolloutProgressing: clustersdkv1alpha1.Progressing,
	policyv1.RolloutSucceeded:   clustersdkv1alpha1.Succeeded,
	policyv1.RolloutFailed:      clustersdkv1alpha1.Failed,
	policyv1.RolloutTimeOut:     clustersdkv1alpha1.TimeOut,
}
