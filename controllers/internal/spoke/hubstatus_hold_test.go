package spoke

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestHoldUnsettledWaitsForOwnEvaluation checks the hub status hold of a
// policy whose ConfigurationPolicy the spoke evaluates itself: a status in
// which it has no compliance yet is never copied to the hub, however long the
// evaluation takes (at 1,000 templated policies the first evaluations come
// more than 30 s after the replicas, and each such copy was a hub write of
// its own before the one with the compliance), nor when template sync has
// just created it once its dependencies were met (observedGeneration
// already current, history Pending); it is copied at once when its
// evaluation is in. A template of a kind the spoke does not evaluate is
// still copied after unsettledHold.
func TestHoldUnsettledWaitsForOwnEvaluation(t *testing.T) {
	start := time.Date(2026, time.November, 28, 12, 0, 0, 0, time.UTC)
	templateOf := func(kind string) *policyv1.PolicyTemplate {
		return &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: fmt.Appendf(nil,
			`{"apiVersion":"policy.open-cluster-management.io/v1","kind":%q,"metadata":{"name":"t"},"spec":{}}`, kind)}}
	}
	copyWith := func(kind string, observed int64, detail policyv1.DetailsPerTemplate) *policyv1.Policy {
		detail.TemplateMeta = metav1.ObjectMeta{Namespace: "c", Name: "t", UID: "u"}
		return &policyv1.Policy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "ns.p", Generation: 1},
			Spec:       policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{templateOf(kind)}},
			Status:     policyv1.PolicyStatus{ObservedGeneration: observed, Details: []*policyv1.DetailsPerTemplate{&detail}},
		}
	}
	pending := []policyv1.ComplianceHistory{{EventName: "ns.p.1", Message: "Pending; Dependencies were not satisfied"}}
	compliant := append([]policyv1.ComplianceHistory{{EventName: "ns.p.2", Message: "Compliant; notification - created"}}, pending...)
	key := types.NamespacedName{Namespace: "c", Name: "ns.p"}

	for _, tc := range []struct {
		name string
		copy *policyv1.Policy
		// heldAfter says whether the status is still held after each wait
		// (from the first look, in order).
		heldAfter map[time.Duration]bool
	}{
		{"just created, not evaluated", copyWith("ConfigurationPolicy", 0, policyv1.DetailsPerTemplate{}),
			map[time.Duration]bool{0: true, 29 * time.Second: true, 31 * time.Second: true, 5 * time.Minute: true}},
		{"created once its dependencies were met", copyWith("ConfigurationPolicy", 1, policyv1.DetailsPerTemplate{History: pending}),
			map[time.Duration]bool{0: true, 31 * time.Second: true}},
		{"evaluated", copyWith("ConfigurationPolicy", 1, policyv1.DetailsPerTemplate{ComplianceState: policyv1.Compliant, History: compliant}),
			map[time.Duration]bool{0: false}},
		{"a kind evaluated elsewhere", copyWith("Other", 0, policyv1.DetailsPerTemplate{}),
			map[time.Duration]bool{0: true, 29 * time.Second: true, 31 * time.Second: false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakePassiveClock(start)
			s := &HubStatusSync{clock: clk, evaluatedHere: evaluatedHere(DefaultOptions())}
			for _, after := range []time.Duration{0, 29 * time.Second, 31 * time.Second, 5 * time.Minute} {
				want, asked := tc.heldAfter[after]
				if !asked {
					continue
				}
				clk.SetTime(start.Add(after))
				if held := s.holdUnsettled(key, tc.copy) > 0; held != want {
					t.Errorf("after %v: held %v, want %v", after, held, want)
				}
			}
		})
	}
}
