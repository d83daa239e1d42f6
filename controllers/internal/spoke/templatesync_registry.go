package spoke

import (
	"slices"
	"sync"

	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

// registry remembers what each policy's templates wait for, as the last
// reconcile of the policy found, so that a change of a dependency enqueues the
// policies waiting for it. It is rebuilt by reconciling: every policy is
// reconciled when the controller starts.
type registry struct {
	mu    sync.Mutex
	waits map[string][]dependency.Ref // policy name -> the targets its templates wait for
}

func newRegistry() *registry {
	return &registry{waits: map[string][]dependency.Ref{}}
}

// record replaces what policy waits for.
func (r *registry) record(policy string, targets []dependency.Ref) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(targets) == 0 {
		delete(r.waits, policy)
		return
	}
	r.waits[policy] = targets
}

// forget drops a policy that is gone.
func (r *registry) forget(policy string) { r.record(policy, nil) }

// dependents returns the policies that wait for target, sorted.
func (r *registry) dependents(target dependency.Ref) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for policy, targets := range r.waits {
		if slices.Contains(targets, target) {
			out = append(out, policy)
		}
	}
	slices.Sort(out)
	return out
}
