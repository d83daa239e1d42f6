package operatorpolicy_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	sharedop "github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// ocmSpelling turns policySpec's fleetpolicy spelling (allowedCSVs) into OCM's.
func ocmSpelling(s *v1beta1.OperatorPolicySpec) {
	s.AllowedCSVs = nil
	s.ComplianceType = policyv1.MustHave
	s.UpgradeApproval = "Automatic"
}

// TestDeletion: deleting an enforcing OperatorPolicy removes its operator only
// in fleetpolicy's spelling (or when its annotation asks for it), and never when
// the spoke deleted it for a transient reason: template sync's mark
// DependenciesUnsatisfied, or its owner Policy gone (the garbage collector). In
// OCM's spelling only complianceType mustnothave removes, per removalBehavior.
func TestDeletion(t *testing.T) {
	deleteByUser := func(t *testing.T, op *v1beta1.OperatorPolicy, _ *policyv1.Policy) {
		t.Helper()
		if err := c.Delete(context.Background(), op); err != nil {
			t.Fatal(err)
		}
	}
	// deleteAsTemplateSync marks the deletion's cause and deletes, as the
	// spoke's template sync does.
	deleteAsTemplateSync := func(cause sharedop.DeletionCause) func(*testing.T, *v1beta1.OperatorPolicy, *policyv1.Policy) {
		return func(t *testing.T, op *v1beta1.OperatorPolicy, owner *policyv1.Policy) {
			t.Helper()
			before := op.DeepCopy()
			metav1.SetMetaDataAnnotation(&op.ObjectMeta, sharedop.AnnotationDeletionCause, string(cause))
			if err := c.Patch(context.Background(), op, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
			deleteByUser(t, op, owner)
		}
	}
	// deleteAsGarbageCollector deletes the owner Policy, then the policy
	// unmarked, as the garbage collector does on a real cluster.
	deleteAsGarbageCollector := func(t *testing.T, op *v1beta1.OperatorPolicy, owner *policyv1.Policy) {
		t.Helper()
		if err := c.Delete(context.Background(), owner); err != nil {
			t.Fatal(err)
		}
		deleteByUser(t, op, owner)
	}
	mustNotHave := func(t *testing.T, op *v1beta1.OperatorPolicy, _ *policyv1.Policy) {
		t.Helper()
		editPolicy(t, op.Namespace, op.Name, func(s *v1beta1.OperatorPolicySpec) { s.ComplianceType = policyv1.MustNotHave })
	}

	type state struct{ subscription, csv, operatorGroup bool }
	kept := state{subscription: true, csv: true, operatorGroup: true}
	cases := []struct {
		name        string
		pkg         string
		ocm         bool
		annotations map[string]string
		removal     v1beta1.RemovalBehavior
		act         func(*testing.T, *v1beta1.OperatorPolicy, *policyv1.Policy)
		// policyStays is true when act does not delete the policy.
		policyStays   bool
		wantFinalizer bool
		want          state
	}{
		{name: "OCM spelling deleted by the user: operator kept", pkg: "del-ocm", ocm: true,
			act: deleteByUser, want: kept},
		{name: "OCM spelling mustnothave: removed per removalBehavior", pkg: "del-ocm-mustnothave", ocm: true,
			removal: v1beta1.RemovalBehavior{OperatorGroups: v1beta1.RemovalKeep},
			act:     mustNotHave, policyStays: true, want: state{operatorGroup: true}},
		{name: "OCM spelling with remove-on-deletion UserDeletion, deleted by the user: removed", pkg: "del-ocm-opt-in", ocm: true,
			annotations: map[string]string{sharedop.AnnotationOnDeletion: "UserDeletion"},
			act:         deleteByUser, wantFinalizer: true, want: state{}},
		{name: "fleetpolicy spelling deleted by the user: removed", pkg: "del-user",
			act: deleteByUser, wantFinalizer: true, want: state{}},
		{name: "fleetpolicy spelling deleted by template sync for an unmet dependency: kept", pkg: "del-pending",
			act: deleteAsTemplateSync(sharedop.DeletedDependenciesUnsatisfied), wantFinalizer: true, want: kept},
		{name: "fleetpolicy spelling deleted by the garbage collector once its Policy is gone: kept", pkg: "del-owner-gone",
			act: deleteAsGarbageCollector, wantFinalizer: true, want: kept},
		{name: "fleetpolicy spelling removed from its Policy (template sync): removed", pkg: "del-template-removed",
			act: deleteAsTemplateSync(sharedop.DeletedTemplateRemoved), wantFinalizer: true, want: state{}},
		{name: "fleetpolicy spelling with remove-on-deletion Always, unmet dependency: removed", pkg: "del-always",
			annotations: map[string]string{sharedop.AnnotationOnDeletion: "Always"},
			act:         deleteAsTemplateSync(sharedop.DeletedDependenciesUnsatisfied), wantFinalizer: true, want: state{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := newNamespace(t, tc.pkg)
			owner := &policyv1.Policy{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"},
				Spec:       policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}},
			}
			if err := c.Create(ctx, owner); err != nil {
				t.Fatal(err)
			}
			spec := policySpec(ns, tc.pkg, catalog, "*")
			if tc.ocm {
				ocmSpelling(&spec)
			}
			spec.RemovalBehavior = tc.removal
			op := &v1beta1.OperatorPolicy{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.pkg, Annotations: tc.annotations, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: policyv1.GroupVersion.String(), Kind: "Policy", Name: owner.Name, UID: owner.UID,
				}}},
				Spec: spec,
			}
			if err := c.Create(ctx, op); err != nil {
				t.Fatal(err)
			}
			op = waitPolicy(t, ns, tc.pkg, "Compliant", compliance(policyv1.Compliant))
			if got := controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer); got != tc.wantFinalizer {
				t.Errorf("holds finalizer %s: %v, want %v", operatorpolicy.Finalizer, got, tc.wantFinalizer)
			}

			tc.act(t, op, owner)
			if tc.policyStays {
				waitPolicy(t, ns, tc.pkg, "Compliant with the operator removed", all(
					compliance(policyv1.Compliant),
					condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionNotPresent"),
				))
			} else {
				waitGone(t, ns, tc.pkg)
			}
			got := state{
				subscription:  exists(t, subscription(ns, tc.pkg)),
				csv:           exists(t, csv(ns, tc.pkg+".v1")),
				operatorGroup: exists(t, operatorGroup(ns, defaultOG)),
			}
			if got != tc.want {
				t.Errorf("after %s: got %+v, want %+v", tc.name, got, tc.want)
			}
		})
	}
}

// waitGone waits until OperatorPolicy ns/name no longer exists.
func waitGone(t *testing.T, ns, name string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "the policy is gone", func() string {
		op := &v1beta1.OperatorPolicy{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, op); err == nil {
			return "still there: " + describe(op)
		}
		return ""
	})
}
