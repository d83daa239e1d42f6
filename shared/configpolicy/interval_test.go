package configpolicy

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestParseInterval(t *testing.T) {
	cases := []struct {
		in      string
		want    Interval
		wantErr bool
	}{
		{in: "", want: Interval{Kind: IntervalWatch}},
		{in: "watch", want: Interval{Kind: IntervalWatch}},
		{in: "never", want: Interval{Kind: IntervalNever}},
		{in: "10s", want: Interval{Kind: IntervalEvery, Every: 10 * time.Second}},
		{in: "1m30s", want: Interval{Kind: IntervalEvery, Every: 90 * time.Second}},
		{in: "1.5h", want: Interval{Kind: IntervalEvery, Every: 90 * time.Minute}},
		{in: "0s", want: Interval{Kind: IntervalEvery}},
		{in: "soon", wantErr: true},
		{in: "-5s", wantErr: true},
		// The CRD pattern lets these through; they are not durations.
		{in: "watchwatch", wantErr: true},
		{in: "10snever", wantErr: true},
	}
	for _, tc := range cases {
		got, err := ParseInterval(tc.in, field.NewPath("spec", "evaluationInterval", "compliant"))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%q: got %+v, %v", tc.in, got, err)
		}
		var fe *field.Error
		if err != nil && (!errors.As(err, &fe) || fe.Field != "spec.evaluationInterval.compliant") {
			t.Errorf("%q: error %v does not name the field", tc.in, err)
		}
	}
}

func TestIntervalForPicksTheStatesField(t *testing.T) {
	ei := policyv1.EvaluationInterval{Compliant: "1m", NonCompliant: "never"}
	if got, _ := IntervalFor(ei, true); got != (Interval{Kind: IntervalEvery, Every: time.Minute}) {
		t.Errorf("compliant: %+v", got)
	}
	if got, _ := IntervalFor(ei, false); got.Kind != IntervalNever {
		t.Errorf("noncompliant: %+v", got)
	}
	_, err := IntervalFor(policyv1.EvaluationInterval{NonCompliant: "x"}, false)
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "spec.evaluationInterval.noncompliant" {
		t.Errorf("malformed noncompliant: %v", err)
	}
}

func TestEvaluatesByWatch(t *testing.T) {
	cases := []struct {
		name          string
		ei            policyv1.EvaluationInterval
		lastCompliant bool
		want          bool
	}{
		{name: "unset is watch", want: true},
		{name: "unset is watch when compliant", lastCompliant: true, want: true},
		{name: "watch", ei: policyv1.EvaluationInterval{Compliant: "watch", NonCompliant: "watch"}, want: true},
		{name: "duration", ei: policyv1.EvaluationInterval{Compliant: "10s", NonCompliant: "10s"}, want: false},
		{name: "never", ei: policyv1.EvaluationInterval{Compliant: "never", NonCompliant: "never"}, lastCompliant: true, want: false},
		{name: "last state decides: compliant", ei: policyv1.EvaluationInterval{Compliant: "10s"}, lastCompliant: true, want: false},
		{name: "last state decides: noncompliant", ei: policyv1.EvaluationInterval{Compliant: "10s"}, want: true},
		{name: "malformed is not watch", ei: policyv1.EvaluationInterval{NonCompliant: "watchwatch"}, want: false},
	}
	for _, tc := range cases {
		if got := EvaluatesByWatch(tc.ei, tc.lastCompliant); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

func TestNextEvaluation(t *testing.T) {
	cases := []struct {
		name      string
		ei        policyv1.EvaluationInterval
		compliant bool
		watched   bool
		missing   bool
		want      Next
		wantErr   bool
	}{
		{name: "unset keeps the watches", watched: true, want: Next{KeepWatches: true}},
		{name: "watch keeps the watches", ei: policyv1.EvaluationInterval{Compliant: "watch"}, compliant: true, watched: true, want: Next{KeepWatches: true}},
		{name: "watch after an evaluation that did not watch evaluates again now", ei: policyv1.EvaluationInterval{Compliant: "10s"},
			want: Next{KeepWatches: true, Now: true}},
		{name: "duration drops the watches", ei: policyv1.EvaluationInterval{NonCompliant: "30s"}, watched: true, want: Next{After: 30 * time.Second}},
		{name: "duration of the compliant state", ei: policyv1.EvaluationInterval{Compliant: "2m", NonCompliant: "watch"}, compliant: true, watched: true,
			want: Next{After: 2 * time.Minute}},
		{name: "0s evaluates again now", ei: policyv1.EvaluationInterval{Compliant: "0s"}, compliant: true, want: Next{Now: true}},
		{name: "never schedules nothing", ei: policyv1.EvaluationInterval{NonCompliant: "never"}, watched: true, want: Next{}},
		{name: "watch with a missing kind retries as OCM does", watched: true, missing: true, want: Next{KeepWatches: true, After: MissingKindRetry}},
		{name: "a duration with a missing kind is the duration", ei: policyv1.EvaluationInterval{NonCompliant: "1h"}, missing: true, want: Next{After: time.Hour}},
		{name: "malformed retries as OCM does", ei: policyv1.EvaluationInterval{Compliant: "10snever"}, compliant: true,
			want: Next{After: InvalidIntervalRetry}, wantErr: true},
	}
	for _, tc := range cases {
		got, err := NextEvaluation(tc.ei, tc.compliant, tc.watched, tc.missing)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: got %+v, %v", tc.name, got, err)
		}
	}
}
