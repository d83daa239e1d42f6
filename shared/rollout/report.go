package rollout

import (
	"strconv"
	"strings"
	"time"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Report is what a cluster's replica says about the evaluation its compliance
// comes from. The two spokes say it differently: fleetpolicy's spoke writes
// status.observedGeneration (the replica generation it evaluated); OCM's
// governance-policy-framework-addon writes no generation, only each template's
// compliance history, whose event times tell when the spoke last evaluated it.
type Report struct {
	// Generation is the replica's metadata.generation.
	Generation int64
	// ObservedGeneration is the replica's status.observedGeneration; 0 when the
	// spoke does not write it (OCM's add-on).
	ObservedGeneration int64
	// EvaluatedAt is EvaluatedAt of the replica's templates and details: when
	// every template had been evaluated at least once more. Zero when unknown.
	EvaluatedAt time.Time
}

// ReportCurrent is whether a replica's compliance is a report on the replica as
// the rollout last wrote it (ClusterState.StatusCurrent apart from the written
// action, which the adapter compares with WrittenAction).
//
// An observedGeneration, when written, decides: it must be the replica's
// generation. Without it (OCM's add-on), the report must post-date the moment
// the rollout reached the cluster in this generation: a cluster that is
// ToApply or Progressing counts only an evaluation after its Progress's
// LastTransitionTime (when the step that wrote its current action ran), a
// TimeOut only one after the timeout. Succeeded and Failed were reached on a
// current report, and the rollout does not rewrite a replica within a
// generation after reaching it, so they stay current. A Progress of another
// root generation is never current: that generation's replica was not written
// yet.
func ReportCurrent(r Report, p Progress, generation int64) bool {
	if r.Generation <= 0 {
		return false
	}
	if r.ObservedGeneration != 0 {
		return r.ObservedGeneration == r.Generation
	}
	if p.Generation != generation || r.EvaluatedAt.IsZero() {
		return false
	}
	switch p.Status {
	case policyv1.RolloutSucceeded, policyv1.RolloutFailed:
		return true
	default:
		return !p.LastTransitionTime.IsZero() && r.EvaluatedAt.After(p.LastTransitionTime)
	}
}

// EvaluatedAt is when the spoke had last evaluated every one of a replica's
// templates: the oldest of the templates' newest history events. OCM's status
// sync writes one details entry per template, in template order, with the
// newest event first. Zero when a template has no details or no event yet.
//
// An event's time is the later of its lastTimestamp (whole seconds on the
// wire) and the time its client-go event name carries (`<name>.<hex unix
// nanoseconds>`, the first occurrence of the event); both never exceed the
// event's real last occurrence, so EvaluatedAt never claims an evaluation later
// than the real one.
func EvaluatedAt(templates int, details []*policyv1.DetailsPerTemplate) time.Time {
	if templates == 0 || len(details) < templates {
		return time.Time{}
	}
	var oldest time.Time
	for _, d := range details[:templates] {
		if d == nil {
			return time.Time{}
		}
		var newest time.Time
		for _, h := range d.History {
			if t := eventTime(h); t.After(newest) {
				newest = t
			}
		}
		if newest.IsZero() {
			return time.Time{}
		}
		if oldest.IsZero() || newest.Before(oldest) {
			oldest = newest
		}
	}
	return oldest
}

// eventTime is the later of an event's lastTimestamp and the time in its name.
func eventTime(h policyv1.ComplianceHistory) time.Time {
	t := h.LastTimestamp.Time
	if i := strings.LastIndexByte(h.EventName, '.'); i >= 0 {
		if nanos, err := strconv.ParseInt(h.EventName[i+1:], 16, 64); err == nil && nanos > 0 {
			if named := time.Unix(0, nanos); named.After(t) {
				t = named
			}
		}
	}
	return t
}
