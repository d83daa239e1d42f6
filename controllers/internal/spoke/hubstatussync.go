package spoke

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// HubStatusSync copies the status of each policy copy on the managed cluster to
// its replica on the hub: compliance and details as they are, observedGeneration
// translated to the generation of the hub replica the copy was made from, and
// the compliance events the hub has not seen copied to the hub. Fields the hub
// owns (rolloutStatus) are left alone. A burst of changes to one policy is
// copied once, Options.HubStatusDelay after the first (see enqueueAfter).
//
// A hub whose Policy CRD has no status.observedGeneration (OCM's, under OCM's
// propagator) drops the field, with a warning: once a write shows it dropped,
// the field is no longer sent, as OCM's framework add-on never sends it.
type HubStatusSync struct {
	Managed client.Client
	Hub     client.Client

	// unsettledSince holds, per policy, when its status was first found
	// unsettled (holdUnsettled), while it is.
	unsettledSince sync.Map
	// evaluatedHere are the template kinds the spoke's own controllers
	// evaluate (holdUnsettled): each writes a compliance for every template
	// it is given, however long its queue takes to reach it.
	evaluatedHere map[schema.GroupKind]bool
	clock         clock.PassiveClock

	events *eventWriter
	// hubDropsObservedGeneration is set once the hub dropped a written
	// status.observedGeneration.
	hubDropsObservedGeneration atomic.Bool
}

// Reconcile copies one policy's status to the hub.
func (s *HubStatusSync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	copied := &policyv1.Policy{}
	if err := s.Managed.Get(ctx, req.NamespacedName, copied); err != nil {
		s.unsettledSince.Delete(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if wait := s.holdUnsettled(req.NamespacedName, copied); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	replica := &policyv1.Policy{}
	if err := s.Hub.Get(ctx, req.NamespacedName, replica); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := s.copyEvents(ctx, copied, replica); err != nil {
		return ctrl.Result{}, err
	}

	status := replica.Status.DeepCopy()
	status.ComplianceState = copied.Status.ComplianceState
	status.Details = make([]*policyv1.DetailsPerTemplate, len(copied.Status.Details))
	for i, d := range copied.Status.Details {
		status.Details[i] = d.DeepCopy()
	}
	if copied.Status.ObservedGeneration == copied.Generation && !s.hubDropsObservedGeneration.Load() {
		if g, err := strconv.ParseInt(copied.Annotations[annotationHubGeneration], 10, 64); err == nil {
			status.ObservedGeneration = g
		}
	}
	if equality.Semantic.DeepEqual(*status, replica.Status) {
		return ctrl.Result{}, nil
	}
	updated := replica.DeepCopy()
	updated.Status = *status
	err := s.Hub.Status().Patch(ctx, updated, client.MergeFrom(replica))
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err == nil && status.ObservedGeneration != replica.Status.ObservedGeneration && updated.Status.ObservedGeneration != status.ObservedGeneration {
		s.hubDropsObservedGeneration.Store(true)
	}
	return ctrl.Result{}, err
}

// unsettledHold is how long a status that is not settled (holdUnsettled)
// waits at most before it is copied to the hub.
const unsettledHold = 30 * time.Second

// holdUnsettled returns how long the copy's status waits before it is copied
// to the hub. It waits while it says nothing the hub can act on yet, or
// says it half, the rest following in moments:
//   - a template of a kind the spoke evaluates itself (evaluatedHere) has no
//     compliance yet (it was just created, or created again once its
//     dependencies were met): its evaluation will give it one, and until
//     then the hub keeps what it has. This wait has no bound: at 1,000
//     templated policies the ConfigurationPolicy controller's first
//     evaluation of the last ones comes a minute after their replicas, and
//     a bound shorter than its queue wrote a status without compliance
//     first;
//   - a template of the policy's generation has not been evaluated (status
//     sync leaves observedGeneration behind) and some template has no
//     compliance at all (the templates were just created);
//   - a template's newest history entry disagrees with its compliance (the
//     template's status is in the cache, the compliance event saying it not
//     yet: the two come through separate watches).
//
// Each would be a hub write (and an Event) of its own before the one that
// says it all. A status that stays so for another reason than the first is
// copied after unsettledHold.
func (s *HubStatusSync) holdUnsettled(key types.NamespacedName, copied *policyv1.Policy) time.Duration {
	unknown := len(copied.Status.Details) == 0
	historyBehind := false
	awaitsEvaluationHere := false
	for _, d := range copied.Status.Details {
		if d == nil || d.ComplianceState == "" {
			unknown = true
			awaitsEvaluationHere = awaitsEvaluationHere || d != nil && s.evaluatesHere(copied, d.TemplateMeta.Name)
			continue
		}
		if len(d.History) > 0 {
			saysCompliant := strings.HasPrefix(d.History[0].Message, string(policyv1.Compliant)+";")
			historyBehind = historyBehind || saysCompliant != (d.ComplianceState == policyv1.Compliant)
		}
	}
	if awaitsEvaluationHere {
		// The evaluation changes the copy's status, which enqueues it; the
		// requeue is a look in case it does not.
		s.unsettledSince.Delete(key)
		return unsettledHold
	}
	if !historyBehind && (copied.Status.ObservedGeneration == copied.Generation || !unknown) {
		s.unsettledSince.Delete(key)
		return 0
	}
	now := s.clock.Now()
	since, _ := s.unsettledSince.LoadOrStore(key, now)
	if waited := now.Sub(since.(time.Time)); waited < unsettledHold {
		return unsettledHold - waited
	}
	return 0
}

// evaluatesHere reports whether the template of p named name is of a kind
// the spoke's own controllers evaluate.
func (s *HubStatusSync) evaluatesHere(p *policyv1.Policy, name string) bool {
	if len(s.evaluatedHere) == 0 {
		return false
	}
	for _, tmpl := range p.Spec.PolicyTemplates {
		if def, ok := tmpl.DefinitionMeta(); ok && def.Name == name {
			return s.evaluatedHere[def.GroupVersionKind().GroupKind()]
		}
	}
	return false
}

// copyEvents writes on the hub, about the replica, the newest compliance event
// of each template's history on the copy when the replica's history does not
// hold it yet: at most one Event per template and status write, as OCM's
// add-on records one Event per status update. The older entries a write
// brings are in the replica's history.
func (s *HubStatusSync) copyEvents(ctx context.Context, copied, replica *policyv1.Policy) error {
	known := map[string]bool{}
	for _, d := range replica.Status.Details {
		if d == nil {
			continue
		}
		for _, h := range d.History {
			known[h.EventName] = true
		}
	}
	ref := policyRef{Namespace: replica.Namespace, Name: replica.Name, UID: replica.UID}
	var errs []error
	for _, d := range copied.Status.Details {
		if d == nil {
			continue
		}
		if len(d.History) == 0 || known[d.History[0].EventName] {
			continue
		}
		h := d.History[0]
		at, ok := history.TimeOf(h.EventName)
		if !ok {
			at = h.LastTimestamp.Time
		}
		reason := history.Reason(d.TemplateMeta.Namespace, d.TemplateMeta.Name)
		errs = append(errs, s.events.copyEvent(ctx, ref, h.EventName, reason, h.Message, at))
	}
	return errors.Join(errs...)
}

// enqueueAfter enqueues the policy an event is about after delay, so that a
// burst of changes is copied once.
func enqueueAfter(delay time.Duration) handler.EventHandler {
	add := func(obj client.Object, q queue) {
		q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}, delay)
	}
	return handler.Funcs{
		CreateFunc:  func(_ context.Context, e event.CreateEvent, q queue) { add(e.Object, q) },
		UpdateFunc:  func(_ context.Context, e event.UpdateEvent, q queue) { add(e.ObjectNew, q) },
		DeleteFunc:  func(_ context.Context, e event.DeleteEvent, q queue) { add(e.Object, q) },
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { add(e.Object, q) },
	}
}
