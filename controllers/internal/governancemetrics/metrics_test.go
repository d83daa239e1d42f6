package governancemetrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestReport(t *testing.T) {
	for state, want := range map[policyv1.ComplianceState]float64{
		policyv1.Compliant: 0, policyv1.NonCompliant: 1, policyv1.Pending: -1, "": -1,
	} {
		if got := Value(state); got != want {
			t.Errorf("Value(%q) = %v, want %v", state, got, want)
		}
	}
	Report("ConfigurationPolicy", "cluster1", "p", "low", policyv1.NonCompliant)
	Report("ConfigurationPolicy", "cluster1", "p", "high", policyv1.Compliant)
	if n := testutil.CollectAndCount(status); n != 1 {
		t.Fatalf("%d series after a severity change, want 1", n)
	}
	if got := testutil.ToFloat64(status.WithLabelValues("ConfigurationPolicy", "p", "cluster1", "high")); got != 0 {
		t.Errorf("the series is %v, want 0 (Compliant)", got)
	}
	Forget("ConfigurationPolicy", "cluster1", "p")
	if n := testutil.CollectAndCount(status); n != 0 {
		t.Errorf("%d series after Forget, want 0", n)
	}
}
