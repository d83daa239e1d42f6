package localplane

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Parallel runs f(i) for every i in [0,n) on workers goroutines (at least one)
// and returns every error f returned, joined.
func Parallel(n, workers int, f func(i int) error) error {
	var mu sync.Mutex
	var errs []error
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// PlacementRuleBinding is the YAML of a PlacementRule name in namespace that
// has decided on cluster, and of a PlacementBinding name of it to policies: the
// shortest way for a test to bind root policies to one cluster. The rule names
// a scheduler of its own (spec.schedulerName), so that the hub's PlacementRule
// scheduler leaves the decisions the test wrote alone.
func PlacementRuleBinding(namespace, name, cluster string, policies ...string) string {
	var subjects strings.Builder
	for _, p := range policies {
		fmt.Fprintf(&subjects, "\n- {apiGroup: policy.open-cluster-management.io, kind: Policy, name: %s}", p)
	}
	return fmt.Sprintf(`
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: %[2]s, namespace: %[1]s}
spec: {schedulerName: test-writes-decisions}
status:
  decisions: [{clusterName: %[3]s, clusterNamespace: %[3]s}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: %[2]s, namespace: %[1]s}
placementRef: {apiGroup: apps.open-cluster-management.io, kind: PlacementRule, name: %[2]s}
subjects:%[4]s
`, namespace, name, cluster, subjects.String())
}
