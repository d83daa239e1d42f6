package configpolicy

import (
	"testing"
	"time"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestKeepTransitionTimes(t *testing.T) {
	before, now := time.Unix(1000, 0), time.Unix(2000, 0)
	old := []policyv1.TemplateStatus{
		Detail(true, "Compliant", "configmaps [a] found as specified", before),
		Detail(false, "NonCompliant", "configmaps [b] not found", before),
	}
	cases := []struct {
		name  string
		fresh []policyv1.TemplateStatus
		want  []time.Time
	}{
		{"one template changed, the other keeps its time", []policyv1.TemplateStatus{
			Detail(true, "Compliant", "configmaps [a] found as specified", now),
			Detail(true, "Compliant", "configmaps [b] found as specified", now),
		}, []time.Time{before, now}},
		{"same state, other message: changed", []policyv1.TemplateStatus{
			Detail(true, "Compliant", "configmaps [a, c] found as specified", now),
			Detail(false, "NonCompliant", "configmaps [b] not found", now),
		}, []time.Time{now, before}},
		{"a template added: it is new", []policyv1.TemplateStatus{
			Detail(true, "Compliant", "configmaps [a] found as specified", now),
			Detail(false, "NonCompliant", "configmaps [b] not found", now),
			Detail(true, "Compliant", "configmaps [d] found as specified", now),
		}, []time.Time{before, before, now}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			KeepTransitionTimes(old, tc.fresh)
			for i, want := range tc.want {
				if got := tc.fresh[i].Conditions[0].LastTransitionTime.Time; !got.Equal(want) {
					t.Errorf("template %d: lastTransitionTime %v, want %v", i, got, want)
				}
			}
		})
	}
}
