package configpolicy

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// IntervalKind is what an evaluationInterval value asks for.
type IntervalKind int

const (
	// IntervalWatch re-evaluates when an object the policy evaluates changes
	// ("watch", and OCM's default when the value is unset).
	IntervalWatch IntervalKind = iota
	// IntervalNever re-evaluates only when the policy changes ("never").
	IntervalNever
	// IntervalEvery re-evaluates once Interval.Every has passed (a duration).
	IntervalEvery
)

// Interval is one parsed evaluationInterval value.
type Interval struct {
	Kind IntervalKind
	// Every is the time between evaluations of IntervalEvery.
	Every time.Duration
}

const (
	// InvalidIntervalRetry is how long OCM waits before evaluating again a
	// policy whose evaluationInterval for its state cannot be read.
	InvalidIntervalRetry = 10 * time.Second
	// MissingKindRetry is how long OCM waits before evaluating again a policy
	// evaluated by watch that names a kind the cluster does not serve (its
	// CRD may come, and cannot be watched before).
	MissingKindRetry = 10 * time.Second
)

// ParseInterval reads an evaluationInterval value: "watch" or "" (unset: OCM
// v0.19's default is watch), "never", or a Go duration ("10s", "1m30s"). A
// negative or malformed value is a *field.Error for path.
func ParseInterval(value string, path *field.Path) (Interval, error) {
	switch v := strings.TrimSpace(value); v {
	case "", "watch":
		return Interval{Kind: IntervalWatch}, nil
	case "never":
		return Interval{Kind: IntervalNever}, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Interval{}, field.Invalid(path, value, "must be a duration such as 10s or 1m30s, never or watch")
		}
		return Interval{Kind: IntervalEvery, Every: d}, nil
	}
}

// IntervalFor is the evaluationInterval that applies to a policy found
// compliant or not: spec.evaluationInterval.compliant when compliant, else
// (NonCompliant, or not evaluated yet) .noncompliant, as OCM does.
func IntervalFor(ei policyv1.EvaluationInterval, compliant bool) (Interval, error) {
	if compliant {
		return ParseInterval(ei.Compliant, field.NewPath("spec", "evaluationInterval", "compliant"))
	}
	return ParseInterval(ei.NonCompliant, field.NewPath("spec", "evaluationInterval", "noncompliant"))
}

// EvaluatesByWatch reports whether an evaluation of a policy last found
// compliant (or not) reads the objects it evaluates through watches, as OCM
// decides it: when the interval of the state it was last found in is watch.
// A malformed interval is not watch.
func EvaluatesByWatch(ei policyv1.EvaluationInterval, lastCompliant bool) bool {
	iv, err := IntervalFor(ei, lastCompliant)
	return err == nil && iv.Kind == IntervalWatch
}

// Next is what follows an evaluation.
type Next struct {
	// KeepWatches keeps what the evaluation watched watched: a change of it
	// evaluates the policy again. Otherwise the policy's watches are removed.
	KeepWatches bool
	// Now evaluates again at once.
	Now bool
	// After, when positive, evaluates again once it has passed.
	After time.Duration
}

// NextEvaluation decides what follows an evaluation that found the policy
// compliant (or not), read through watches (watched) or not, and met a kind
// the cluster does not serve (kindMissing) or not, from the interval of the
// state found:
//
//   - watch: the watches stay and nothing is scheduled, but after
//     MissingKindRetry when a kind is missing. When the evaluation did not
//     watch (the previous state's interval was not watch), it is repeated at
//     once so that it does (OCM would wait for a change of the policy
//     instead).
//   - never: nothing is scheduled and the watches go.
//   - a duration: evaluate again after it (at once for 0s), without watches.
//   - malformed: evaluate again after InvalidIntervalRetry, without watches,
//     and the *field.Error is returned to be reported.
func NextEvaluation(ei policyv1.EvaluationInterval, compliant, watched, kindMissing bool) (Next, error) {
	iv, err := IntervalFor(ei, compliant)
	if err != nil {
		return Next{After: InvalidIntervalRetry}, err
	}
	switch iv.Kind {
	case IntervalWatch:
		if watched && kindMissing {
			return Next{KeepWatches: true, After: MissingKindRetry}, nil
		}
		return Next{KeepWatches: true, Now: !watched}, nil
	case IntervalNever:
		return Next{}, nil
	default:
		if iv.Every <= 0 {
			return Next{Now: true}, nil
		}
		return Next{After: iv.Every}, nil
	}
}
