package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Event reasons on root policies.
const (
	reasonBindingInvalid = "BindingInvalid"
	// reasonPlacementDecisionInvalid: a PlacementDecision of a placement the
	// root is bound to has a decision-group-index label that is no index.
	reasonPlacementDecisionInvalid = "PlacementDecisionInvalid"
	reasonPropagationFailed        = "PropagationFailed"
	reasonClusterNamespace         = "ClusterNamespaceMissing"
	reasonRolloutInvalid           = "RolloutInvalid"
	reasonRolloutWave              = "RolloutWave"
	reasonRolloutNote              = "RolloutNote"
)

// Propagator reconciles root policies: their replicas and their status.
type Propagator struct {
	Client client.Client
	// Policies writes replicas and root statuses as raw JSON and does not
	// decode the server's answer: the informer brings the stored policy back
	// anyway, and skipping the decode saves a third of the hub's CPU per
	// replica write (and the decode of a root's whole status per status write).
	Policies rest.Interface
	Recorder events.EventRecorder
	// Writers bounds the replica writes in flight for one root policy.
	Writers int
	// writeSlots bounds the replica writes in flight across every root
	// policy; nil: only Writers does.
	writeSlots *semaphore.Weighted
	// Clock is the propagator's only source of time: rollout steps, and how
	// long its own writes have been in flight (not nil).
	Clock clock.PassiveClock
	// Templates resolves hub templates; nil: a root with hub templates gets no
	// replica and says so.
	Templates *hubTemplates

	// settled says which roots only replica status reports changed since their
	// last full reconcile; nil: every reconcile is full.
	settled *settledRoots
	// statusWrites says which roots the cache still shows as they were before
	// the propagator's own last status write; nil: reconciles do not wait for
	// the cache.
	statusWrites *statusWrites
	// inFlight holds the replica writes the cache has not brought back yet,
	// which a reconcile does not make again; nil: every difference is written.
	inFlight *replicasInFlight
	// failures counts the consecutive failed writes of each replica that may
	// pass by themselves, which the root names in ReplicasFailed only once
	// they persist; nil: every failed write is named at once.
	failures *failureStreaks
}

// replicaWrite is one write a reconcile decided on: the replica of cluster with
// action (from replicas, or desired when its hub templates were resolved for
// the cluster), or a delete when both are nil. A write of a root with hub
// templates (templated) is a candidate: the writer resolves the templates
// first and writes only when the result differs from actual.
type replicaWrite struct {
	replicas  *replication.Replicas
	desired   *policyv1.Policy
	templated bool
	cluster   string
	action    policyv1.RemediationAction
	actual    *policyv1.Policy // nil for a create
	// rolloutStatus, when set, is patched onto the replica's status after its
	// spec write, or alone when statusOnly (planRolloutStatus).
	rolloutStatus policyv1.RolloutStatus
	statusOnly    bool
}

func (w replicaWrite) isDelete() bool { return !w.statusOnly && w.replicas == nil && w.desired == nil }

// The verbs of replica writes, as the replicaWrites metric and the
// ReplicasFailed condition name them.
const (
	verbCreate = "create"
	verbUpdate = "update"
	verbDelete = "delete"
)

func (w replicaWrite) verb() string {
	switch {
	case w.statusOnly:
		return verbRolloutStatus
	case w.isDelete():
		return verbDelete
	case w.actual == nil:
		return verbCreate
	}
	return verbUpdate
}

// namespace is the cluster namespace the write goes to.
func (w replicaWrite) namespace() string {
	if w.actual != nil {
		return w.actual.Namespace
	}
	return w.cluster
}

// body is the replica to write, as JSON, with resourceVersion set.
func (w replicaWrite) body(resourceVersion string) []byte {
	if w.desired == nil {
		return w.replicas.JSON(w.cluster, w.action, resourceVersion)
	}
	desired := *w.desired
	desired.ResourceVersion = resourceVersion
	b, _ := json.Marshal(&desired) // a Policy always encodes
	return b
}

// Reconcile brings one root policy's replicas and status in line with its bindings.
//
// When only replica status reports changed since the root's last full
// reconcile (see settledRoots), and the rollout step reaches no cluster, the
// reconcile is status-only: it runs the rollout step, whose progress the
// reports change, and writes the root's status; it skips what reports cannot
// change: the RolloutPlan comparison, the replica plan, and resolving the
// bindings again (the first status-only reconcile of an epoch resolves them
// and keeps the result for the next, settledRoots.keep).
func (p *Propagator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	now := p.Clock.Now()
	logger := log.FromContext(ctx)
	var epoch uint64
	if p.settled != nil {
		epoch = p.settled.epoch(req.NamespacedName) // before anything is read
	}

	root := &policyv1.Policy{}
	if err := p.Client.Get(ctx, req.NamespacedName, root); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		root = nil
	}
	if root != nil && (replication.IsReplica(root) || !root.DeletionTimestamp.IsZero()) {
		if replication.IsReplica(root) {
			return ctrl.Result{}, nil
		}
		root = nil
	}
	if root != nil && p.statusWrites != nil {
		if behind, age := p.statusWrites.behind(root, p.Clock.Now()); behind {
			// The cache has not brought back this root's last status write: a
			// status computed over the old one would be refused as a conflict.
			return ctrl.Result{RequeueAfter: cacheCatchUp(age)}, nil
		}
	}

	existing, err := p.replicasOf(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}

	var resolution *binding.Resolution
	var step rollout.StepResult
	var planCondition *metav1.Condition
	var sets []policyv1beta1.PolicySet
	var unknown []string
	statusOnly := root != nil && p.settled != nil && p.settled.isSettled(epoch, root)
	if root != nil {
		if reason, problem, err := p.rootProblem(ctx, root); err != nil || problem != nil {
			if err != nil {
				return ctrl.Result{}, err
			}
			return p.reportInvalid(ctx, root, reason, problem)
		}
		var bound *boundInputs
		if statusOnly {
			// Nothing the bindings resolve from changed since the epoch.
			bound = p.settled.bound(epoch, root)
		}
		kept := bound != nil
		if !kept {
			var bad *badInput
			if sets, bound, bad, err = p.resolveBindings(ctx, root); err != nil {
				return ctrl.Result{}, err
			}
			if bad != nil {
				// The replicas stay as they are until the input is fixed (its
				// change enqueues the root).
				return p.reportInvalid(ctx, root, bad.reason, bad.problem)
			}
			if statusOnly {
				p.settled.keep(root, epoch, bound)
			}
		}
		resolution, unknown = bound.resolution, bound.unknown
		groups := bound.groups
		var fleet []rollout.DecisionGroup
		step, fleet, err = p.step(root, resolution, groups, existing, now)
		// Reports change what is written only by making the step reach
		// clusters: those of the next wave of a progressive rollout, or that
		// the full reconcile did not. Such a reconcile (or one that drops
		// clusters, which a change of the fleet's would have bumped) is full.
		statusOnly = statusOnly && err == nil && len(step.Reached) == 0 && len(step.Removed) == 0
		if err == nil && !statusOnly {
			planCondition, err = p.planCondition(ctx, root, resolution, fleet)
		}
		if err != nil {
			return p.reportInvalid(ctx, root, reasonRolloutInvalid, err)
		}
		if kept && !statusOnly {
			// The replica plan expands the root's PolicySets, which the kept
			// resolution does not hold.
			if sets, _, err = p.bindingInputs(ctx, root); err != nil {
				return ctrl.Result{}, err
			}
		}
	}

	var writes []replicaWrite
	inFlight := 0
	if !statusOnly {
		writes = p.plan(root, step.Clusters, sets, existing)
		writes, inFlight = p.dropInFlight(req.NamespacedName, writes)
	}
	if root != nil {
		// Also in a status-only reconcile: reports are what move a cluster to
		// Succeeded or Failed.
		writes = p.planRolloutStatus(req.NamespacedName, step.Clusters, existing, writes)
	}
	written, templateErrs, failures, writeErr := p.write(ctx, req.NamespacedName, root, writes)
	if !statusOnly {
		// Every replica that is not as it should be was written just now, or
		// is in flight: the failures are all there are.
		failures = p.failures.reported(req.NamespacedName, failures)
	}
	sortByCluster(failures) // for HubTemplatesResolved too
	if root == nil {
		if p.inFlight != nil && len(existing) == 0 {
			p.inFlight.forget(req.NamespacedName)
		}
		if p.settled != nil {
			p.settled.forget(req.NamespacedName)
		}
		if p.statusWrites != nil {
			p.statusWrites.forget(req.NamespacedName)
		}
		p.failures.forget(req.NamespacedName)
		if p.Templates != nil {
			p.Templates.forget(req.NamespacedName, nil)
		}
		replicasPerPolicy.DeleteLabelValues(req.Namespace, req.Name)
		reconcileTotal.WithLabelValues(outcome(writeErr)).Inc()
		return ctrl.Result{}, writeErr
	}
	replicasPerPolicy.WithLabelValues(root.Namespace, root.Name).Set(float64(len(resolution.Clusters)))
	if written > 0 && writeErr == nil {
		propagationSeconds.Observe(p.Clock.Since(now).Seconds())
		logger.V(1).Info("propagated", "writes", written, "clusters", len(resolution.Clusters))
	}
	if writeErr == nil {
		p.reportWave(root, step)
	}

	templatesCondition, retryTemplates := p.reportTemplates(root, step.Clusters, templateErrs, failures)
	conditions := []conditionUpdate{
		{ConditionClustersUnknown, unknownClustersCondition(root, unknown)},
		{ConditionHubTemplatesResolved, templatesCondition},
		{ConditionBindingOverridesIgnored, ignoredOverridesCondition(root, resolution)},
	}
	if !statusOnly {
		// A status-only reconcile writes no replica (and never runs while a
		// write fails: such a root does not settle): ReplicasFailed stays as
		// the last full reconcile left it.
		conditions = append(conditions,
			conditionUpdate{ConditionReplicasFailed, replicasFailedCondition(root, failures, len(step.Clusters))},
			conditionUpdate{ConditionRolloutPlanMatches, planCondition})
	}
	statusChanged, statusErr := p.updateRootStatus(ctx, root, resolution, step, existing, conditions...)
	if statusChanged && statusErr == nil && p.statusWrites != nil {
		p.statusWrites.wrote(root, p.Clock.Now())
	}
	err = errors.Join(writeErr, statusErr)
	reconcileTotal.WithLabelValues(outcome(err)).Inc()
	if statusOnly {
		statusOnlyReconciles.Inc()
	}
	if p.settled != nil {
		// Settled: the replicas are as this step wants them, nothing is left to
		// retry but maybe the status write (a conflict with the root's own
		// newer version, whose spec changes bump the epoch), and the root has
		// no hub templates, which may read anything, replicas included.
		statusRetried := statusErr == nil || apierrors.IsConflict(statusErr)
		p.settled.settle(root, epoch, writeErr == nil && statusRetried && written == 0 && inFlight == 0 && !retryTemplates && !templates.UsesHubTemplates(root))
	}
	switch {
	case err != nil && apierrors.IsConflict(statusErr) && writeErr == nil:
		// The root changed since the cache saw it; its update event is queued,
		// and the next step must run even if that event was already handled.
		return ctrl.Result{RequeueAfter: stepRequeueDelay}, nil
	case err != nil:
		return ctrl.Result{}, err
	case statusChanged && !statusOnly:
		// The step recorded new progress. The next step must see it even when no
		// replica changes (a cluster reached again after a restart whose replica
		// already carries, and has reported on, what this step wrote). A fixed
		// delay, not the rate limiter: a rollout changes the status step after
		// step, and the limiter's backoff would double with every change.
		return ctrl.Result{RequeueAfter: stepRequeueDelay}, nil
	case step.RequeueAfter != nil && (!retryTemplates || *step.RequeueAfter < templateRetryDelay):
		return ctrl.Result{RequeueAfter: max(*step.RequeueAfter, 100*time.Millisecond)}, nil
	case retryTemplates:
		return ctrl.Result{RequeueAfter: templateRetryDelay}, nil
	case inFlight > 0:
		// Their watch events enqueue the root; this bounds the wait for one
		// that never comes.
		return ctrl.Result{RequeueAfter: inFlightTimeout}, nil
	}
	return ctrl.Result{}, nil
}

// dropInFlight removes from writes those of replicas whose last accepted
// write the cache has not brought back (replicasInFlight), and counts them.
func (p *Propagator) dropInFlight(root types.NamespacedName, writes []replicaWrite) ([]replicaWrite, int) {
	if p.inFlight == nil {
		return writes, 0
	}
	now := p.Clock.Now()
	kept := writes[:0]
	for _, w := range writes {
		cached := ""
		if w.actual != nil {
			cached = w.actual.ResourceVersion
		}
		if !p.inFlight.pending(root, w.namespace(), cached, now) {
			kept = append(kept, w)
		}
	}
	return kept, len(writes) - len(kept)
}

// boundInputs is what a root's bindings resolved to: the bound clusters, the
// decision groups of its placements (clusters without a ManagedCluster
// dropped), and those clusters.
type boundInputs struct {
	resolution *binding.Resolution
	groups     map[binding.PlacementRef][]rollout.DecisionGroup
	unknown    []string
}

// badInput is bad input found resolving a root's bindings, to report on the
// root (reportInvalid) with its reason.
type badInput struct {
	reason  string
	problem error
}

// resolveBindings reads the root's PolicySets, bindings and their placements'
// decisions and resolves them, or says what in them is bad input.
func (p *Propagator) resolveBindings(ctx context.Context, root *policyv1.Policy) ([]policyv1beta1.PolicySet, *boundInputs, *badInput, error) {
	sets, bindings, err := p.bindingInputs(ctx, root)
	if err != nil {
		return nil, nil, nil, err
	}
	decisions, groups, problem, err := p.decisions(ctx, root, sets, bindings)
	if err != nil {
		return nil, nil, nil, err
	}
	if problem != nil {
		return nil, nil, &badInput{reasonPlacementDecisionInvalid, problem}, nil
	}
	unknown, err := p.dropUnknownClusters(ctx, decisions, groups)
	if err != nil {
		return nil, nil, nil, err
	}
	resolution, err := binding.Resolve(root, sets, bindings, decisions)
	if err != nil {
		return nil, nil, &badInput{reasonBindingInvalid, err}, nil
	}
	return sets, &boundInputs{resolution: resolution, groups: groups, unknown: unknown}, nil, nil
}

// stepRequeueDelay is how long after recording progress the next rollout step
// runs: time for the cache to see the root's new status.
const stepRequeueDelay = 50 * time.Millisecond

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}

// replicasOf lists a root policy's replicas from the cache, by cluster namespace.
// The replicas are the cache's own objects, not copies: they are read, never
// modified.
func (p *Propagator) replicasOf(ctx context.Context, root types.NamespacedName) (map[string]*policyv1.Policy, error) {
	list := &policyv1.PolicyList{}
	if err := p.Client.List(ctx, list, client.UnsafeDisableDeepCopy,
		client.MatchingFields{indexReplicaRoot: replication.Name(root.Namespace, root.Name)}); err != nil {
		return nil, err
	}
	out := make(map[string]*policyv1.Policy, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Namespace] = &list.Items[i]
	}
	return out, nil
}

// bindingInputs returns the PolicySets of the root's namespace and the bindings
// that name the root or one of the sets containing it.
func (p *Propagator) bindingInputs(ctx context.Context, root *policyv1.Policy) ([]policyv1beta1.PolicySet, []policyv1.PlacementBinding, error) {
	sets := &policyv1beta1.PolicySetList{}
	if err := p.Client.List(ctx, sets, client.InNamespace(root.Namespace)); err != nil {
		return nil, nil, err
	}
	subjects := []string{kindName(binding.KindPolicy, root.Name)}
	for _, set := range sets.Items {
		for _, member := range set.Spec.Policies {
			if string(member) == root.Name {
				subjects = append(subjects, kindName(binding.KindPolicySet, set.Name))
				break
			}
		}
	}
	seen := map[string]bool{}
	var bindings []policyv1.PlacementBinding
	for _, subject := range subjects {
		list := &policyv1.PlacementBindingList{}
		if err := p.Client.List(ctx, list, client.InNamespace(root.Namespace), client.MatchingFields{indexBindingSubject: subject}); err != nil {
			return nil, nil, err
		}
		for _, pb := range list.Items {
			if !seen[pb.Name] {
				seen[pb.Name] = true
				bindings = append(bindings, pb)
			}
		}
	}
	return sets.Items, bindings, nil
}

// decisions reads the clusters selected by each placement of the bindings that
// bind root (binding.Placements) and their decision groups for the rollout, with
// scheduling.GroupOf and RuleGroup, as plan-rollout reads them: a Placement's
// PlacementDecisions, a PlacementRule's status.decisions (one group of index 0);
// a missing placement selects nothing. A PlacementDecision whose
// decision-group-index label is no index is a problem to report on the root
// when its rollout orders clusters by group (rollout.UsesGroupIndexes);
// otherwise its clusters are bound as group 0, as OCM's propagator binds them.
func (p *Propagator) decisions(ctx context.Context, root *policyv1.Policy, sets []policyv1beta1.PolicySet, bindings []policyv1.PlacementBinding) (
	out binding.Decisions, groups map[binding.PlacementRef][]rollout.DecisionGroup, problem, err error) {
	out = binding.Decisions{}
	groups = map[binding.PlacementRef][]rollout.DecisionGroup{}
	var problems []error
	for _, ref := range binding.Placements(root, sets, bindings) {
		var clusters []string
		switch ref.Kind {
		case binding.KindPlacement:
			list := &clusterv1beta1.PlacementDecisionList{}
			if err := p.Client.List(ctx, list, client.InNamespace(root.Namespace),
				client.MatchingFields{indexDecisionPlacement: root.Namespace + "/" + ref.Name}); err != nil {
				return nil, nil, nil, err
			}
			for i := range list.Items {
				group, err := scheduling.GroupOf(&list.Items[i])
				if err != nil && rollout.UsesGroupIndexes(&root.Spec) {
					problems = append(problems, fmt.Errorf("PlacementDecision %s/%s of Placement %s: %w",
						root.Namespace, list.Items[i].Name, ref.Name, err))
					continue
				}
				clusters = append(clusters, group.Clusters...)
				groups[ref] = append(groups[ref], group)
			}
		case binding.KindPlacementRule:
			rule := &appsv1.PlacementRule{}
			err := p.Client.Get(ctx, types.NamespacedName{Namespace: root.Namespace, Name: ref.Name}, rule)
			if apierrors.IsNotFound(err) {
				rule = &appsv1.PlacementRule{ObjectMeta: metav1.ObjectMeta{Namespace: root.Namespace, Name: ref.Name}}
			} else if err != nil {
				return nil, nil, nil, err
			}
			group := scheduling.RuleGroup(rule)
			clusters = group.Clusters
			groups[ref] = []rollout.DecisionGroup{group}
		}
		out[ref] = clusters
	}
	return out, groups, errors.Join(problems...), nil
}

// ConditionClustersUnknown is the root condition that names the clusters its
// placements decided on that have no ManagedCluster: they get no replica, so
// that a decision cannot make the hub write into an arbitrary namespace
// (kube-system, say). A ManagedCluster created later gets its replica.
const ConditionClustersUnknown = "ClustersUnknown"

// dropUnknownClusters removes from decisions and groups every cluster without a
// ManagedCluster, and returns those clusters sorted.
func (p *Propagator) dropUnknownClusters(ctx context.Context, decisions binding.Decisions, groups map[binding.PlacementRef][]rollout.DecisionGroup) ([]string, error) {
	known := map[string]bool{}
	var cluster clusterv1.ManagedCluster // only its existence is read: no copy of the cache's
	for _, clusters := range decisions {
		for _, name := range clusters {
			if _, seen := known[name]; seen {
				continue
			}
			err := p.Client.Get(ctx, types.NamespacedName{Name: name}, &cluster, client.UnsafeDisableDeepCopy)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			known[name] = err == nil
		}
	}
	isUnknown := func(name string) bool { return !known[name] }
	for ref, clusters := range decisions {
		decisions[ref] = slices.DeleteFunc(clusters, isUnknown)
	}
	for ref, gs := range groups {
		for i := range gs {
			gs[i].Clusters = slices.DeleteFunc(slices.Clone(gs[i].Clusters), isUnknown)
		}
		groups[ref] = gs
	}
	var unknown []string
	for name, ok := range known {
		if !ok {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown, nil
}

// unknownClustersCondition says which decided clusters have no ManagedCluster;
// nil when all have one.
func unknownClustersCondition(root *policyv1.Policy, unknown []string) *metav1.Condition {
	if len(unknown) == 0 {
		return nil
	}
	shown := unknown
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(unknown)-10))
	}
	return &metav1.Condition{Type: ConditionClustersUnknown, Status: metav1.ConditionTrue,
		ObservedGeneration: root.Generation, Reason: "ManagedClusterMissing",
		Message: fmt.Sprintf("no replica for %d decided cluster(s) without a ManagedCluster: %s",
			len(unknown), strings.Join(shown, ", "))}
}

// step runs one rollout step for the bound clusters over rollout.BoundFleet; each
// cluster's progress is read back from the root's status, and its compliance
// from its replica (rollout.ClusterStates), current only when the replica
// carries what the previous step wrote and the spoke evaluated it since
// (fleetpolicy's spoke says so with observedGeneration, OCM's add-on with its
// compliance history's event times, which the cache keeps as evaluatedAt).
func (p *Propagator) step(root *policyv1.Policy, res *binding.Resolution, groups map[binding.PlacementRef][]rollout.DecisionGroup, existing map[string]*policyv1.Policy, now time.Time) (rollout.StepResult, []rollout.DecisionGroup, error) {
	fleet := rollout.BoundFleet(res, func(ref binding.PlacementRef) []rollout.DecisionGroup { return groups[ref] })
	result, err := rollout.Step(rollout.StepInput{
		Strategy:          root.Spec.Rollout(),
		RemediationAction: root.Spec.RemediationAction,
		Generation:        root.Generation,
		Fleet:             fleet,
		Clusters:          rollout.ClusterStates(root, res, existing, evaluatedAt),
		Now:               now,
	})
	return result, fleet, err
}

// ConditionRolloutPlanMatches is the root condition that says whether the live
// rollout follows the RolloutPlan of the same name applied to the hub.
const ConditionRolloutPlanMatches = "RolloutPlanMatches"

// planCondition compares the live waves with a RolloutPlan of the root's name
// applied to the hub (one plan-rollout wrote without local-config). No such plan
// gives no condition.
func (p *Propagator) planCondition(ctx context.Context, root *policyv1.Policy, res *binding.Resolution, fleet []rollout.DecisionGroup) (*metav1.Condition, error) {
	plan := &fleetv1alpha1.RolloutPlan{}
	if err := p.Client.Get(ctx, client.ObjectKeyFromObject(root), plan); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if plan.Annotations["config.kubernetes.io/local-config"] == "true" {
		return nil, nil
	}
	live, err := rollout.PlanBound(root.Spec.Rollout(), root.Spec.RemediationAction, res, fleet)
	if err != nil {
		return nil, err
	}
	planned := make([][]string, len(plan.Spec.Waves))
	for i, w := range plan.Spec.Waves {
		planned[i] = w.Clusters
	}
	cond := &metav1.Condition{Type: ConditionRolloutPlanMatches, ObservedGeneration: root.Generation,
		Status: metav1.ConditionTrue, Reason: "Matches",
		Message: fmt.Sprintf("the live waves follow RolloutPlan %s", plan.Name)}
	if diff := rollout.Divergence(planned, live); diff != "" {
		cond.Status, cond.Reason = metav1.ConditionFalse, "Diverged"
		cond.Message = fmt.Sprintf("the live waves no longer follow RolloutPlan %s: %s", plan.Name, diff)
	}
	return cond, nil
}

// reportWave emits an Event when a step reached new clusters of a progressive
// rollout (rollout.StepResult.Reached), and the step's notes with it.
func (p *Propagator) reportWave(root *policyv1.Policy, step rollout.StepResult) {
	var reached []string
	groups := map[string]bool{}
	for _, d := range step.Reached {
		reached = append(reached, d.Name)
		groups[fmt.Sprintf("%s/%s[%d]", d.Group.Placement, d.Group.GroupName, d.Group.GroupIndex)] = true
	}
	if len(reached) == 0 || !rollout.Progressive(&root.Spec) {
		return
	}
	shown := reached
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(reached)-10))
	}
	p.Recorder.Eventf(root, nil, corev1.EventTypeNormal, reasonRolloutWave, "Rollout",
		"enforcing on %d cluster(s) of %s: %s", len(reached), strings.Join(slices.Sorted(maps.Keys(groups)), ", "), strings.Join(shown, ", "))
	for _, note := range step.Notes {
		p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonRolloutNote, "Rollout", "%s", note.String())
	}
}

// plan compares the desired replicas — one per cluster of the rollout step, with
// the action it decided — with the cached ones and returns the writes. Desired
// replicas are compared by digest and encoded by the writers, so that a
// reconcile holds no desired replica in memory. A root with hub templates has
// replicas that differ per cluster: every decided cluster is a candidate write
// that the writers resolve (in parallel) and compare (see write).
func (p *Propagator) plan(root *policyv1.Policy, decided []rollout.ClusterDecision, sets []policyv1beta1.PolicySet, existing map[string]*policyv1.Policy) []replicaWrite {
	var writes []replicaWrite
	bound := map[string]bool{}
	if root != nil {
		replicas := replication.For(root, dependency.IndexPolicySets(setPointers(sets)))
		templated := templates.UsesHubTemplates(root)
		for _, c := range decided {
			bound[c.Name] = true
			actual := existing[c.Name]
			if templated {
				writes = append(writes, replicaWrite{replicas: replicas, templated: true, cluster: c.Name, action: c.RemediationAction, actual: actual})
			} else if actual == nil || actual.Annotations[cachedDigestAnnotation] != replicas.Digest(c.Name, c.RemediationAction) {
				writes = append(writes, replicaWrite{replicas: replicas, cluster: c.Name, action: c.RemediationAction, actual: actual})
			}
		}
		if p.Templates != nil {
			// Resolutions of clusters no longer bound, or of a root that no
			// longer has hub templates, are dropped with their watches.
			keep := bound
			if !templated {
				keep = nil
			}
			p.Templates.forget(client.ObjectKeyFromObject(root), keep)
		}
	}
	for ns, actual := range existing {
		if !bound[ns] {
			writes = append(writes, replicaWrite{actual: actual})
		}
	}
	return writes
}

// resolve turns a templated candidate write into a write of the replica with
// its hub templates resolved for the cluster (the cached replica's IV kept),
// or into no write (ok false) when the result is what the cluster already has.
func (p *Propagator) resolve(ctx context.Context, root *policyv1.Policy, w replicaWrite) (_ replicaWrite, ok bool, err error) {
	if p.Templates == nil {
		return w, false, errors.New("hub templates are not resolved by this propagator")
	}
	desired := w.replicas.Build(w.cluster, w.action)
	var previousIV string
	if w.actual != nil {
		previousIV = w.actual.Annotations[templates.IVAnnotation]
	}
	if err := p.Templates.resolve(ctx, root, desired, previousIV); err != nil {
		return w, false, err
	}
	if w.actual != nil && w.actual.Annotations[cachedDigestAnnotation] == replication.Digest(desired) {
		return w, false, nil
	}
	w.desired, w.templated = desired, false
	return w, true, nil
}

// ConditionHubTemplatesResolved is the root condition that says whether its
// hub templates resolved for every cluster it is replicated to and the
// resolved replica is there; False names the clusters whose replica kept its
// last good spec (or was not created) and their errors: a template error, or
// the API server's refusal of the resolved replica (named, with its error, in
// ReplicasFailed). Roots without hub templates do not have it.
const ConditionHubTemplatesResolved = "HubTemplatesResolved"

// reasonPolicyPropagation is OCM's Event reason for a hub template error.
const reasonPolicyPropagation = "PolicyPropagation"

// reportTemplates emits an Event per cluster whose hub templates failed with a
// new error and returns the root's HubTemplatesResolved condition (nil for a
// root without hub templates) and whether an error may go away without a
// watched change (then the root is reconciled again later). failed are the
// failed replica writes the root names (ReplicasFailed): a cluster whose
// resolved replica was not written has not got what its templates resolved
// to, and the condition is False for it too.
func (p *Propagator) reportTemplates(root *policyv1.Policy, decided []rollout.ClusterDecision, errs map[string]error, failed []writeFailure) (*metav1.Condition, bool) {
	if !templates.UsesHubTemplates(root) {
		return nil, false
	}
	refused, nRefused := notWritten(failed)
	if len(errs) == 0 && nRefused == 0 {
		return &metav1.Condition{Type: ConditionHubTemplatesResolved, Status: metav1.ConditionTrue,
			ObservedGeneration: root.Generation, Reason: "Resolved",
			Message: fmt.Sprintf("hub templates resolved for all %d cluster(s)", len(decided))}, false
	}
	var notTaken string
	if nRefused > 0 {
		if nRefused > len(refused) {
			refused = append(refused, fmt.Sprintf("and %d more", nRefused-len(refused)))
		}
		notTaken = fmt.Sprintf("the API server did not take the resolved replica of %d cluster(s), which keep their last resolved spec or have none (see %s): %s",
			nRefused, ConditionReplicasFailed, strings.Join(refused, ", "))
	}
	if len(errs) == 0 {
		return &metav1.Condition{Type: ConditionHubTemplatesResolved, Status: metav1.ConditionFalse,
			ObservedGeneration: root.Generation, Reason: reasonReplicaNotWritten,
			Message: fmt.Sprintf("hub templates resolved for all %d cluster(s), but %s", len(decided), notTaken)}, false
	}
	clusters := slices.Sorted(maps.Keys(errs))
	retry := false
	var lines []string
	for _, cluster := range clusters {
		err := errs[cluster]
		retry = retry || retryable(err)
		// A cluster not tried after another met the bounds gets no Event: the
		// one that met them has it.
		var stalled stalledError
		if !errors.As(err, &stalled) && (p.Templates == nil || p.Templates.reportError(client.ObjectKeyFromObject(root), cluster, err)) {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonPolicyPropagation, reasonPolicyPropagation,
				"Failed to resolve templates for cluster %s: %v", cluster, err)
		}
		if len(lines) < 10 {
			lines = append(lines, fmt.Sprintf("%s: %v", cluster, err))
		}
	}
	if len(clusters) > len(lines) {
		lines = append(lines, fmt.Sprintf("and %d more", len(clusters)-len(lines)))
	}
	message := fmt.Sprintf("hub templates failed for %d of %d cluster(s); their replicas keep their last resolved spec or are not created: %s",
		len(clusters), len(decided), strings.Join(lines, "; "))
	if notTaken != "" {
		message += "; and " + notTaken
	}
	return &metav1.Condition{Type: ConditionHubTemplatesResolved, Status: metav1.ConditionFalse,
		ObservedGeneration: root.Generation, Reason: "HubTemplateError", Message: message}, retry
}

// reasonReplicaNotWritten is the HubTemplatesResolved reason when the hub
// templates resolved for every cluster but the API server did not take the
// resolved replica of some.
const reasonReplicaNotWritten = "ReplicaNotWritten"

func setPointers(sets []policyv1beta1.PolicySet) []*policyv1beta1.PolicySet {
	out := make([]*policyv1beta1.PolicySet, len(sets))
	for i := range sets {
		out[i] = &sets[i]
	}
	return out
}

// write performs the writes of the replicas of root (named key) with at most
// p.Writers in flight, resolving the hub templates of templated candidates
// first (a cluster whose templates fail gets no write: its replica keeps its
// last good spec, or is not created), and records each accepted write in
// p.inFlight. It returns the number of writes issued, the template errors by
// cluster, and the writes the API server did not take: those in the error,
// and an update's conflicts, which are no error (the cache was behind: the
// newer replica's event brings the root back) but are named on the root when
// they persist (failureStreaks).
func (p *Propagator) write(ctx context.Context, key types.NamespacedName, root *policyv1.Policy, writes []replicaWrite) (int, map[string]error, []writeFailure, error) {
	if len(writes) == 0 {
		return 0, nil, nil, nil
	}
	workers := max(1, min(p.Writers, len(writes)))
	jobs := make(chan replicaWrite)
	var mu sync.Mutex
	var errs []error
	var failures []writeFailure
	templateErrs := map[string]error{}
	written := 0
	missingNamespaces := map[string]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// writeSpec makes w's spec write (create, update, delete) and
			// reports whether the replica is there with it (or was
			// already, for a templated candidate that needs none).
			writeSpec := func(w replicaWrite) bool {
				if w.templated {
					var ok bool
					var err error
					if w, ok, err = p.resolve(ctx, root, w); !ok {
						if err != nil {
							mu.Lock()
							templateErrs[w.cluster] = err
							mu.Unlock()
						}
						return err == nil && w.actual != nil
					}
				}
				err := p.writeInSlot(ctx, key, w)
				conflict := w.verb() == verbUpdate && apierrors.IsConflict(err)
				mu.Lock()
				written++
				if err != nil {
					failures = append(failures, writeFailure{cluster: w.namespace(), verb: w.verb(), err: err})
				}
				mu.Unlock()
				if err == nil || conflict {
					if p.inFlight != nil {
						replaced := ""
						if w.actual != nil {
							replaced = w.actual.ResourceVersion
						}
						p.inFlight.wrote(key, w.namespace(), replaced, p.Clock.Now())
					}
					return err == nil
				}
				mu.Lock()
				if w.verb() == verbCreate && apierrors.IsNotFound(err) {
					missingNamespaces[w.cluster] = true
				} else {
					errs = append(errs, err)
				}
				mu.Unlock()
				return false
			}
			for w := range jobs {
				if !w.statusOnly && !writeSpec(w) || w.rolloutStatus == "" || w.isDelete() {
					continue
				}
				if err := p.patchRolloutStatusInSlot(ctx, key, w); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("rolloutStatus of the replica in %s: %w", w.cluster, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, w := range writes {
		jobs <- w
	}
	close(jobs)
	wg.Wait()

	if root != nil {
		for ns := range missingNamespaces {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonClusterNamespace, "Propagate",
				"cluster namespace %s does not exist; the replica will be created when it does", ns)
		}
		if len(errs) > 0 {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonPropagationFailed, "Propagate",
				"%d of %d replica writes failed: %v", len(errs), written, errs[0])
		}
	}
	if len(missingNamespaces) > 0 {
		errs = append(errs, fmt.Errorf("%d cluster namespaces missing", len(missingNamespaces)))
	}
	return written, templateErrs, failures, errors.Join(errs...)
}

// writeInSlot is writeOne once one of the hub-wide write slots is free.
func (p *Propagator) writeInSlot(ctx context.Context, root types.NamespacedName, w replicaWrite) error {
	if p.writeSlots == nil {
		return p.writeOne(ctx, root, w)
	}
	if err := p.writeSlots.Acquire(ctx, 1); err != nil {
		return err
	}
	defer p.writeSlots.Release(1)
	return p.writeOne(ctx, root, w)
}

// patchRolloutStatusInSlot patches w.rolloutStatus onto the status of root's
// replica in w.cluster once a hub-wide write slot is free, and records the
// accepted patch (replicasInFlight.statusWrote). A replica that is gone is no
// error: its delete event brings the root back.
func (p *Propagator) patchRolloutStatusInSlot(ctx context.Context, root types.NamespacedName, w replicaWrite) error {
	if p.writeSlots != nil {
		if err := p.writeSlots.Acquire(ctx, 1); err != nil {
			return err
		}
		defer p.writeSlots.Release(1)
	}
	err := p.Policies.Patch(types.MergePatchType).Namespace(w.cluster).Resource("policies").
		Name(replication.Name(root.Namespace, root.Name)).SubResource("status").
		Body(rolloutStatusPatch(w.rolloutStatus)).Do(ctx).Error()
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	replicaWrites.WithLabelValues(verbRolloutStatus).Inc()
	p.inFlight.statusWrote(root, w.cluster, w.rolloutStatus, p.Clock.Now())
	return nil
}

// writeOne writes one replica of root. A write refused only because the
// cache was behind returns nil: a create of the replica that exists (the
// create event brings it back here), an update or delete of a replica that is
// gone (so does the delete event). An update's conflict is returned: the
// cache was behind too, and the caller counts it (failureStreaks).
func (p *Propagator) writeOne(ctx context.Context, root types.NamespacedName, w replicaWrite) error {
	var err error
	verb := w.verb()
	switch verb {
	case verbDelete:
		err = client.IgnoreNotFound(p.Client.Delete(ctx, w.actual))
	case verbCreate:
		err = p.Policies.Post().Namespace(w.cluster).Resource("policies").
			Body(w.body("")).Do(ctx).Error()
		if apierrors.IsAlreadyExists(err) {
			return p.nameTaken(ctx, root, w.cluster, err)
		}
	default:
		err = p.Policies.Put().Namespace(w.cluster).Resource("policies").Name(w.actual.Name).
			Body(w.body(w.actual.ResourceVersion)).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
	}
	if err == nil {
		replicaWrites.WithLabelValues(verb).Inc()
	}
	return err
}

// nameTaken tells apart the two reasons a create of root's replica in cluster
// met AlreadyExists (exists): the cache was behind the replica (nil), or a
// Policy that is not root's replica holds its name (exists, saying so: the
// hub does not take over a Policy it did not write, and the replica is not
// created until that one is deleted or renamed). The cache has the other
// Policy, or will bring it back here with its event.
func (p *Propagator) nameTaken(ctx context.Context, root types.NamespacedName, cluster string, exists error) error {
	held := &policyv1.Policy{}
	err := p.Client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: replication.Name(root.Namespace, root.Name)},
		held, client.UnsafeDisableDeepCopy)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if of, ok := replication.RootOf(held); ok && of == root {
		return nil
	}
	return fmt.Errorf("%w: that Policy is not a replica of %s (its label %s does not name the root); the hub does not write over it",
		exists, root, replication.LabelRootPolicy)
}

// conditionUpdate is a root condition to set, or to remove when nil.
type conditionUpdate struct {
	conditionType string
	condition     *metav1.Condition
}

// updateRootStatus writes placement[], status[] (compliance and rollout progress
// per cluster), compliant, rolloutStatus and the conditions when they changed.
func (p *Propagator) updateRootStatus(ctx context.Context, root *policyv1.Policy, res *binding.Resolution, step rollout.StepResult, existing map[string]*policyv1.Policy, conditions ...conditionUpdate) (changed bool, err error) {
	perCluster, compliant := rollout.RootStatus(res, existing, step)
	status := root.Status.DeepCopy()
	status.Placement = res.Placements
	status.Status = perCluster
	status.ComplianceState = compliant
	status.RolloutStatus = step.RolloutStatus
	for _, u := range conditions {
		if u.condition == nil {
			meta.RemoveStatusCondition(&status.Conditions, u.conditionType)
			continue
		}
		was := meta.FindStatusCondition(root.Status.Conditions, u.conditionType)
		if u.conditionType == ConditionRolloutPlanMatches && u.condition.Status == metav1.ConditionFalse &&
			(was == nil || was.Status != metav1.ConditionFalse || was.Message != u.condition.Message) {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, "RolloutPlanDiverged", "Rollout", "%s", u.condition.Message)
		}
		meta.SetStatusCondition(&status.Conditions, *u.condition)
	}
	setRuleConditions(status, root.Generation, step.Notes)
	if equality.Semantic.DeepEqual(*status, root.Status) {
		return false, nil
	}
	updated := *root // shallow: only Status is replaced, and the copy is only encoded
	updated.Status = *status
	updated.APIVersion, updated.Kind = policyv1.GroupVersion.String(), "Policy"
	body, err := json.Marshal(&updated)
	if err != nil {
		return false, err
	}
	return true, p.Policies.Put().Namespace(root.Namespace).Resource("policies").Name(root.Name).
		SubResource("status").Body(body).Do(ctx).Error()
}
