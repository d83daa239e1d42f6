package rollout

import (
	"sync"
	"time"

	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clustersdkv1alpha1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"

	testingclock "k8s.io/utils/clock/testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// libraryClockLock serialises calls to OCM's rollout library, which reads the time
// from its package variable RolloutClock: each call sets that variable to a clock
// frozen at the caller's now and restores it afterwards.
var libraryClockLock sync.Mutex

// decide runs OCM's rollout library once over the fleet, at now.
func decide(f *fleet, strategy clusterv1alpha1.RolloutStrategy, existing []clustersdkv1alpha1.ClusterRolloutStatus, now time.Time) (clustersdkv1alpha1.RolloutResult, error) {
	// The handler never calls its status function: the caller computes the
	// existing statuses, as here.
	handler, err := clustersdkv1alpha1.NewRolloutHandler[struct{}](f.tracker(), nil)
	if err != nil {
		return clustersdkv1alpha1.RolloutResult{}, err
	}

	libraryClockLock.Lock()
	defer libraryClockLock.Unlock()
	previous := clustersdkv1alpha1.RolloutClock
	clustersdkv1alpha1.RolloutClock = testingclock.NewFakeClock(now)
	defer func() { clustersdkv1alpha1.RolloutClock = previous }()

	_, result, err := handler.GetRolloutCluster(strategy, existing)
	return result, err
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
