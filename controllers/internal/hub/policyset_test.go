package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestPolicySetStatusMessageAndCompliance follows a PolicySet's
// status.statusMessage and status.compliant as OCM's propagator writes them:
// members pending, disabled, without status and deleted listed in that order
// ("All policies are reporting status" once none is), and no compliance while
// a member has none, even beside a NonCompliant one.
func TestPolicySetStatusMessageAndCompliance(t *testing.T) {
	const ns, cl = "policyset-message", "cluster-f"
	testkit.Apply(t, c, policyYAML(ns, "p1", "inform"))
	testkit.Apply(t, c, policyYAML(ns, "p2", "inform"))
	testkit.Apply(t, c, strings.Replace(policyYAML(ns, "paused", "inform"), "disabled: false", "disabled: true", 1))
	testkit.Apply(t, c, `
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: set, namespace: policyset-message}
spec: {policies: [p1, p2, paused, gone]}
---
`+decidedPlacement(ns, cl)+`
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: set-pb, namespace: policyset-message}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: PolicySet, name: set}]
`)
	expectReplicas(t, ns, "p1", want([]string{cl}, nil))
	expectReplicas(t, ns, "p2", want([]string{cl}, nil))

	expectSet := func(step, message string, compliant policyv1.ComplianceState) {
		t.Helper()
		testkit.Eventually(t, 20*time.Second, step, func() string {
			set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
			get(t, set)
			if set.Status.StatusMessage != message || set.Status.Compliant != compliant {
				return fmt.Sprintf("message %q compliant %q, want %q and %q", set.Status.StatusMessage, set.Status.Compliant, message, compliant)
			}
			return ""
		})
	}
	report := func(name string, state policyv1.ComplianceState) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			r := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cl, Name: replication.Name(ns, name)}}
			get(t, r)
			r.Status.ComplianceState = state
			return c.Status().Update(context.Background(), r)
		}); err != nil {
			t.Fatal(err)
		}
	}

	expectSet("before any status", "Disabled policies: paused; No status provided while awaiting policy status: p1, p2; Deleted policies: gone", "")
	report("p2", policyv1.NonCompliant)
	expectSet("one member without status hides the other's NonCompliant",
		"Disabled policies: paused; No status provided while awaiting policy status: p1; Deleted policies: gone", "")
	report("p1", policyv1.Pending)
	expectSet("a pending member", "Policies awaiting pending dependencies: p1; Disabled policies: paused; Deleted policies: gone", policyv1.NonCompliant)
	report("p1", policyv1.Compliant)
	expectSet("every member reports", "Disabled policies: paused; Deleted policies: gone", policyv1.NonCompliant)

	// The deleted member appears: without status, it hides the compliance.
	testkit.Apply(t, c, policyYAML(ns, "gone", "inform"))
	expectSet("the deleted member created", "Disabled policies: paused; No status provided while awaiting policy status: gone", "")

	// Only reporting members left: the message says so.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
		get(t, set)
		set.Spec.Policies = []policyv1.NonEmptyString{"p1", "p2"}
		return c.Update(context.Background(), set)
	}); err != nil {
		t.Fatal(err)
	}
	expectSet("only reporting members", "All policies are reporting status", policyv1.NonCompliant)

	// Without members, as OCM: an empty status, bindings and all.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
		get(t, set)
		set.Spec.Policies = []policyv1.NonEmptyString{}
		return c.Update(context.Background(), set)
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "no members, empty status", func() string {
		set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}
		get(t, set)
		if !equality.Semantic.DeepEqual(set.Status, policyv1beta1.PolicySetStatus{}) {
			return fmt.Sprintf("status %+v", set.Status)
		}
		return ""
	})
}
