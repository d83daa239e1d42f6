package rollout

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestReportCurrent(t *testing.T) {
	reached := time.Date(2026, 11, 24, 10, 0, 0, 500_000_000, time.UTC)
	before, after := reached.Add(-time.Millisecond), reached.Add(time.Millisecond)
	progress := func(status policyv1.RolloutStatus, gen int64) Progress {
		return Progress{Status: status, Generation: gen, LastTransitionTime: reached}
	}
	ocm := func(evaluated time.Time) Report { return Report{Generation: 3, EvaluatedAt: evaluated} }
	for _, tc := range []struct {
		name     string
		report   Report
		progress Progress
		want     bool
	}{
		{"fleetpolicy spoke: observed the replica's generation", Report{Generation: 3, ObservedGeneration: 3}, progress(policyv1.RolloutProgressing, 2), true},
		{"fleetpolicy spoke: observed an older generation", Report{Generation: 3, ObservedGeneration: 2, EvaluatedAt: after}, progress(policyv1.RolloutProgressing, 2), false},
		{"replica not read", Report{}, progress(policyv1.RolloutProgressing, 2), false},
		{"OCM spoke: evaluated after the cluster was reached", ocm(after), progress(policyv1.RolloutProgressing, 2), true},
		{"OCM spoke: evaluated before the cluster was reached (stale)", ocm(before), progress(policyv1.RolloutProgressing, 2), false},
		{"OCM spoke: evaluated at the very moment it was reached (stale)", ocm(reached), progress(policyv1.RolloutProgressing, 2), false},
		{"OCM spoke: no evaluation yet", ocm(time.Time{}), progress(policyv1.RolloutProgressing, 2), false},
		{"OCM spoke: progress of an older root generation", ocm(after), progress(policyv1.RolloutSucceeded, 1), false},
		{"OCM spoke: not reached yet, evaluated since", ocm(after), progress(policyv1.RolloutToApply, 2), true},
		{"OCM spoke: succeeded on a current report stays current", ocm(before), progress(policyv1.RolloutSucceeded, 2), true},
		{"OCM spoke: failed on a current report stays current", ocm(before), progress(policyv1.RolloutFailed, 2), true},
		{"OCM spoke: timed out, evaluated before the timeout", ocm(before), progress(policyv1.RolloutTimeOut, 2), false},
		{"OCM spoke: timed out, evaluated after the timeout", ocm(after), progress(policyv1.RolloutTimeOut, 2), true},
		{"OCM spoke: no transition time", ocm(after), Progress{Status: policyv1.RolloutProgressing, Generation: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReportCurrent(tc.report, tc.progress, 2); got != tc.want {
				t.Errorf("ReportCurrent(%+v, %+v, 2) = %v, want %v", tc.report, tc.progress, got, tc.want)
			}
		})
	}
}

func TestEvaluatedAt(t *testing.T) {
	sec := func(s int) time.Time { return time.Date(2026, 11, 24, 10, 0, s, 0, time.UTC) }
	// event is a history entry as OCM's status sync writes it: lastTimestamp in
	// whole seconds, the name with the first occurrence in hex nanoseconds.
	event := func(first time.Time, last time.Time) policyv1.ComplianceHistory {
		return policyv1.ComplianceHistory{
			LastTimestamp: metav1.NewTime(last.Truncate(time.Second)),
			EventName:     fmt.Sprintf("default.pol.%x", first.UnixNano()),
			Message:       "Compliant; notification - configmaps [a] found as specified",
		}
	}
	details := func(histories ...[]policyv1.ComplianceHistory) []*policyv1.DetailsPerTemplate {
		var out []*policyv1.DetailsPerTemplate
		for _, h := range histories {
			out = append(out, &policyv1.DetailsPerTemplate{History: h})
		}
		return out
	}
	precise := sec(5).Add(250 * time.Millisecond)
	for _, tc := range []struct {
		name      string
		templates int
		details   []*policyv1.DetailsPerTemplate
		want      time.Time
	}{
		{"the name's nanoseconds beat the whole-second timestamp", 1,
			details([]policyv1.ComplianceHistory{event(precise, precise)}), precise},
		{"a repeated event's later lastTimestamp beats its name", 1,
			details([]policyv1.ComplianceHistory{event(precise, sec(9))}), sec(9)},
		{"newest event of a template, whatever the order", 1,
			details([]policyv1.ComplianceHistory{event(sec(2), sec(2)), event(sec(7), sec(7))}), sec(7)},
		{"oldest of the templates' newest events", 2,
			details([]policyv1.ComplianceHistory{event(sec(7), sec(7))}, []policyv1.ComplianceHistory{event(sec(4), sec(4))}), sec(4)},
		{"a template without details", 2,
			details([]policyv1.ComplianceHistory{event(sec(7), sec(7))}), time.Time{}},
		{"a template without history", 2,
			details([]policyv1.ComplianceHistory{event(sec(7), sec(7))}, nil), time.Time{}},
		{"a name without a time falls back to lastTimestamp", 1,
			details([]policyv1.ComplianceHistory{{LastTimestamp: metav1.NewTime(sec(3)), EventName: "default.pol"}}), sec(3)},
		{"no templates", 0, nil, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EvaluatedAt(tc.templates, tc.details); !got.Equal(tc.want) {
				t.Errorf("EvaluatedAt = %v, want %v", got, tc.want)
			}
		})
	}
}
