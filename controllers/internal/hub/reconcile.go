package hub

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// rootReconcile is one reconcile of a live root policy: what it read, what it
// decided, and what its writes came to, filled in step by step (reconcile).
type rootReconcile struct {
	root *policyv1.Policy
	key  types.NamespacedName
	// epoch is the root's settledRoots epoch when the reconcile started.
	epoch uint64
	// now is when the reconcile started: the time of its rollout step.
	now time.Time
	// existing are the root's cached replicas, by cluster namespace.
	existing map[string]*policyv1.Policy
	// statusOnly: only replica status reports changed since the root's last
	// full reconcile, and the rollout step reaches no cluster (see reconcile).
	statusOnly bool

	// bound is what the root's bindings resolved to; boundKept when a
	// status-only reconcile took it from settledRoots, without sets.
	bound     *boundInputs
	boundKept bool
	// sets are the PolicySets of the root's namespace.
	sets []policyv1beta1.PolicySet
	// step is the rollout step, planCondition the root's RolloutPlanMatches
	// condition (full reconciles only).
	step          rollout.StepResult
	planCondition *metav1.Condition

	// written counts the replica writes issued, inFlight those not made
	// again because the cache has not brought back the last one.
	written, inFlight int
	// templateErrs are the hub template errors by cluster, failures the
	// replica writes the root names (ReplicasFailed), writeErr the writes'
	// error.
	templateErrs map[string]error
	failures     []writeFailure
	writeErr     error
	// retryTemplates: a template error may go away without a watched change.
	retryTemplates bool
	// statusChanged: the root's status was written (statusErr: and failed).
	statusChanged bool
	statusErr     error
}

// reconcile brings a live root's replicas and status in line with its
// bindings: it checks that the root can be propagated, resolves its bindings
// (bind), runs the rollout step (runStep), plans the replica writes
// (planWrites), makes them (writeReplicas), writes the root's status
// (writeStatus), and says when to come back (requeue). s holds the root, its
// replicas, and the epoch and time the reconcile started with.
//
// When only replica status reports changed since the root's last full
// reconcile (see settledRoots), and the rollout step reaches no cluster, the
// reconcile is status-only: it runs the rollout step, whose progress the
// reports change, and writes the root's status; it skips what reports cannot
// change: the RolloutPlan comparison, the replica plan, and resolving the
// bindings again (the first status-only reconcile of an epoch resolves them
// and keeps the result for the next, settledRoots.keep).
func (p *Propagator) reconcile(ctx context.Context, s *rootReconcile) (ctrl.Result, error) {
	root := s.root
	s.statusOnly = p.settled.isSettled(s.epoch, root)
	if reason, problem, err := p.rootProblem(ctx, root); err != nil || problem != nil {
		if err != nil {
			return ctrl.Result{}, err
		}
		return p.reportInvalid(ctx, root, reason, problem)
	}
	if bad, err := p.bind(ctx, s); err != nil || bad != nil {
		if err != nil {
			return ctrl.Result{}, err
		}
		// The replicas stay as they are until the input is fixed (its
		// change enqueues the root).
		return p.reportInvalid(ctx, root, bad.reason, bad.problem)
	}
	if err := p.runStep(ctx, s); err != nil {
		return p.reportInvalid(ctx, root, reasonRolloutInvalid, err)
	}
	writes, err := p.planWrites(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	p.writeReplicas(ctx, s, writes)
	p.writeStatus(ctx, s)

	reconcileTotal.WithLabelValues(outcome(errors.Join(s.writeErr, s.statusErr))).Inc()
	if s.statusOnly {
		statusOnlyReconciles.Inc()
	}
	p.settled.settle(root, s.epoch, s.settled())
	return s.requeue()
}

// settled reports whether the root is settled after the reconcile: the
// replicas are as this step wants them, nothing is left to retry but maybe
// the status write (a conflict with the root's own newer version, whose spec
// changes bump the epoch), and the root has no hub templates, which may read
// anything, replicas included.
func (s *rootReconcile) settled() bool {
	statusRetried := s.statusErr == nil || apierrors.IsConflict(s.statusErr)
	return s.writeErr == nil && statusRetried && s.written == 0 && s.inFlight == 0 &&
		!s.retryTemplates && !templates.UsesHubTemplates(s.root)
}

// stepRequeueDelay is how long after recording progress the next rollout step
// runs: time for the cache to see the root's new status.
const stepRequeueDelay = 50 * time.Millisecond

// requeue is the reconcile's result: when to reconcile the root again.
func (s *rootReconcile) requeue() (ctrl.Result, error) {
	err := errors.Join(s.writeErr, s.statusErr)
	switch {
	case err != nil && apierrors.IsConflict(s.statusErr) && s.writeErr == nil:
		// The root changed since the cache saw it; its update event is queued,
		// and the next step must run even if that event was already handled.
		return ctrl.Result{RequeueAfter: stepRequeueDelay}, nil
	case err != nil:
		return ctrl.Result{}, err
	case s.statusChanged && !s.statusOnly:
		// The step recorded new progress. The next step must see it even when no
		// replica changes (a cluster reached again after a restart whose replica
		// already carries, and has reported on, what this step wrote). A fixed
		// delay, not the rate limiter: a rollout changes the status step after
		// step, and the limiter's backoff would double with every change.
		return ctrl.Result{RequeueAfter: stepRequeueDelay}, nil
	case s.step.RequeueAfter != nil && (!s.retryTemplates || *s.step.RequeueAfter < templateRetryDelay):
		return ctrl.Result{RequeueAfter: max(*s.step.RequeueAfter, 100*time.Millisecond)}, nil
	case s.retryTemplates:
		return ctrl.Result{RequeueAfter: templateRetryDelay}, nil
	case s.inFlight > 0:
		// Their watch events enqueue the root; this bounds the wait for one
		// that never comes.
		return ctrl.Result{RequeueAfter: ownWriteTimeout}, nil
	}
	return ctrl.Result{}, nil
}
