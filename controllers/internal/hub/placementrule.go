package hub

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

// PlacementRuleScheduled is the PlacementRule condition that says whether the
// hub could decide on its clusters.
const PlacementRuleScheduled = "Scheduled"

// PlacementRuleScheduler writes the status.decisions of PlacementRules, as
// OCM's PlacementRule controller does (scheduling.PlacementRuleDecisions),
// after each change of a rule or of the ManagedClusters. A rule naming another
// scheduler in spec.schedulerName is left alone. A spec it cannot decide on (a
// selector that does not parse) keeps its decisions and gets the condition
// Scheduled=False naming the field, and a Warning Event.
type PlacementRuleScheduler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// Reconcile decides on one PlacementRule.
func (r *PlacementRuleScheduler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rule := &appsv1.PlacementRule{}
	if err := r.Client.Get(ctx, req.NamespacedName, rule); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if rule.DeletionTimestamp != nil || !scheduling.SchedulesPlacementRule(rule.Spec) {
		return reconcile.Result{}, nil
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return reconcile.Result{}, err
	}
	decisions, err := scheduling.PlacementRuleDecisions(rule.Spec, rule.Status.Decisions, clusters.Items)
	condition := metav1.Condition{Type: PlacementRuleScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled",
		Message: "status.decisions follow spec", ObservedGeneration: rule.Generation}
	if err != nil {
		decisions = rule.Status.Decisions
		condition.Status, condition.Reason, condition.Message = metav1.ConditionFalse, "InvalidSpec", err.Error()
		// Once per problem, not on every cluster change.
		if old := meta.FindStatusCondition(rule.Status.Conditions, PlacementRuleScheduled); old == nil || old.Message != condition.Message {
			r.Recorder.Eventf(rule, nil, corev1.EventTypeWarning, "InvalidSpec", "Schedule", "%s", err.Error())
		}
	}
	status := rule.Status.DeepCopy()
	status.Decisions = decisions
	meta.SetStatusCondition(&status.Conditions, condition)
	if apiequality.Semantic.DeepEqual(*status, rule.Status) {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFrom(rule.DeepCopy())
	rule.Status = *status
	return reconcile.Result{}, r.Client.Status().Patch(ctx, rule, patch)
}

// setupPlacementRuleScheduler registers the scheduler with the manager.
func setupPlacementRuleScheduler(mgr ctrl.Manager, c client.Client, recorder events.EventRecorder, starts *controllerStarts) error {
	rulesOf := func(ctx context.Context, _ client.Object) []reconcile.Request {
		rules := &appsv1.PlacementRuleList{}
		if err := c.List(ctx, rules); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(rules.Items))
		for _, r := range rules.Items {
			out = append(out, request(r.Namespace, r.Name))
		}
		return out
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.PlacementRule{}).
		// Only what the decisions read: a cluster's labels, conditions,
		// allocatable resources, deletion, arrival and departure.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(rulesOf),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return clusterChangeMatters(e.ObjectOld.(*clusterv1.ManagedCluster), e.ObjectNew.(*clusterv1.ManagedCluster))
			}}))
	return starts.complete("placementrule-scheduler", b, logging.QuietWhenStopping(&PlacementRuleScheduler{Client: c, Recorder: recorder}))
}

// clusterChangeMatters reports whether an update of a ManagedCluster may change
// a PlacementRule's decisions.
func clusterChangeMatters(old, updated *clusterv1.ManagedCluster) bool {
	conditions := func(c *clusterv1.ManagedCluster) []string {
		out := make([]string, 0, len(c.Status.Conditions))
		for _, cond := range c.Status.Conditions {
			out = append(out, cond.Type+"="+string(cond.Status))
		}
		slices.Sort(out)
		return out
	}
	return (old.DeletionTimestamp == nil) != (updated.DeletionTimestamp == nil) ||
		!apiequality.Semantic.DeepEqual(old.Labels, updated.Labels) ||
		!apiequality.Semantic.DeepEqual(old.Status.Allocatable, updated.Status.Allocatable) ||
		!slices.Equal(conditions(old), conditions(updated))
}
