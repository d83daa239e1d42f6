package operatorpolicy_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	sharedop "github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

const (
	compliant    = string(policyv1.Compliant)
	nonCompliant = string(policyv1.NonCompliant)
	defaultOG    = sharedop.DefaultOperatorGroupName
)

// TestInstall is OperatorPolicy user story 1 (examples/api/operator-policy.yaml):
// an enforcing policy with one allowed CSV creates the OperatorGroup and a
// Manual Subscription, approves the InstallPlan and becomes Compliant once the
// CSV succeeded and its Deployment is available. Compliance events go to the policy and to the Policy that
// owns it.
func TestInstall(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "install")
	parent := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"},
		Spec:       policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}},
	}
	if err := c.Create(ctx, parent); err != nil {
		t.Fatal(err)
	}
	spec := policySpec(ns, "install-op", catalog, "install-op.v1")
	spec.Subscription.StartingCSV = "install-op.v1"
	createPolicy(t, ns, "install-op", spec, metav1.OwnerReference{
		APIVersion: policyv1.GroupVersion.String(), Kind: "Policy", Name: parent.Name, UID: parent.UID,
	})

	op := waitPolicy(t, ns, "install-op", "Compliant after the install", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeCompliant, metav1.ConditionTrue, ""),
		condition(sharedop.TypeOperatorGroupCompliant, metav1.ConditionTrue, "OperatorGroupCreated"),
		condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionCreated"),
		condition(sharedop.TypeInstallPlanCompliant, metav1.ConditionTrue, "NoInstallPlansRequiringApproval"),
		condition(sharedop.TypeClusterServiceVersionCompliant, metav1.ConditionTrue, "InstallSucceeded", "ClusterServiceVersion (install-op.v1)"),
		condition(sharedop.TypeDeploymentCompliant, metav1.ConditionTrue, "DeploymentsAvailable"),
		condition(sharedop.TypeCatalogSourcesUnhealthy, metav1.ConditionFalse, "CatalogSourcesFound"),
		related("Subscription", "install-op", compliant, "K8s creation success"),
		related("OperatorGroup", defaultOG, compliant, "K8s creation success"),
		related("InstallPlan", installPlanName(t, ns), compliant, "The InstallPlan is Complete"),
		related("ClusterServiceVersion", "install-op.v1", compliant, "Resource found as expected"),
		related("Deployment", "install-op-controller", compliant, "Deployment Available"),
		related("CatalogSource", catalog, compliant, "Resource found as expected"),
	))
	if !controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer) {
		t.Errorf("an enforcing policy has no finalizer %s: %v", operatorpolicy.Finalizer, op.Finalizers)
	}
	for _, ro := range op.Status.RelatedObjects {
		if ro.Object.Kind == "Subscription" && (ro.Properties == nil || !ptr.Deref(ro.Properties.CreatedByPolicy, false)) {
			t.Errorf("the Subscription's relatedObject does not say createdByPolicy: %+v", ro)
		}
	}

	sub := subscription(ns, "install-op")
	if !exists(t, sub) {
		t.Fatal("no Subscription")
	}
	if sub.Spec.InstallPlanApproval != operatorsv1alpha1.ApprovalManual {
		t.Errorf("installPlanApproval %q: enforcing restricted allowedCSVs must make it Manual", sub.Spec.InstallPlanApproval)
	}
	if sub.Spec.CatalogSource != catalog || sub.Spec.CatalogSourceNamespace != catalogNS || sub.Spec.StartingCSV != "install-op.v1" {
		t.Errorf("Subscription spec %+v does not carry the policy's", sub.Spec)
	}
	plans := installPlans(t, ns)
	if len(plans) != 1 || !plans[0].Spec.Approved {
		t.Errorf("want one approved InstallPlan, got %+v", plans)
	}

	// The events: NonCompliant while installing, Compliant at the end, about
	// the OperatorPolicy and its parent Policy alike.
	for _, about := range []struct{ kind, name string }{{"OperatorPolicy", "install-op"}, {"Policy", "parent"}} {
		events := complianceEvents(t, ns, about.kind, about.name)
		if len(events) < 2 {
			t.Fatalf("%s %s: want several compliance events, got %d", about.kind, about.name, len(events))
		}
		first, last := events[0], events[len(events)-1]
		if !strings.HasPrefix(first.Message, "NonCompliant; ") || first.Type != corev1.EventTypeWarning {
			t.Errorf("%s %s: first event %s %q, want a NonCompliant warning", about.kind, about.name, first.Type, first.Message)
		}
		if !strings.HasPrefix(last.Message, "Compliant; ") || last.Type != corev1.EventTypeNormal {
			t.Errorf("%s %s: last event %s %q, want a Compliant one", about.kind, about.name, last.Type, last.Message)
		}
		if last.Reason != "policy: "+ns+"/install-op" {
			t.Errorf("%s %s: event reason %q", about.kind, about.name, last.Reason)
		}
		if about.kind == "Policy" && (last.InvolvedObject.UID != parent.UID || last.Related == nil || last.Related.Name != "install-op") {
			t.Errorf("the parent's event is not about it (uid %s) and related to the OperatorPolicy: %+v %+v", parent.UID, last.InvolvedObject, last.Related)
		}
	}
}

// installPlanName is the name of the only InstallPlan of ns, once there is one.
func installPlanName(t *testing.T, ns string) string {
	t.Helper()
	var name string
	testkit.Eventually(t, 30*time.Second, "an InstallPlan in "+ns, func() string {
		plans := installPlans(t, ns)
		if len(plans) != 1 {
			return "no single InstallPlan yet"
		}
		name = plans[0].Name
		return ""
	})
	return name
}

// TestInformReportsWithoutWriting: an inform policy only reads. With nothing
// installed it is NonCompliant saying what is missing and that it is not
// created; with the operator installed (by an enforcing policy) it is
// Compliant. It never holds a finalizer and never approves.
func TestInformReportsWithoutWriting(t *testing.T) {
	ns := newNamespace(t, "inform")
	spec := policySpec(ns, "inform-op", catalog, "inform-op.v1")
	spec.RemediationAction = "inform"
	createPolicy(t, ns, "watcher", spec)

	op := waitPolicy(t, ns, "watcher", "NonCompliant, nothing created", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeOperatorGroupCompliant, metav1.ConditionFalse, "OperatorGroupMissing",
			"the OperatorGroup required by the policy was not found and is not created because the policy is not enforced"),
		condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionFalse, "SubscriptionMissing",
			"the Subscription required by the policy was not found and is not created because the policy is not enforced"),
		related("Subscription", "inform-op", nonCompliant, "Resource not found but should exist"),
	))
	if exists(t, subscription(ns, "inform-op")) || exists(t, operatorGroup(ns, defaultOG)) {
		t.Fatal("an inform policy created OLM objects")
	}
	if len(op.Finalizers) > 0 {
		t.Errorf("an inform policy holds finalizers %v", op.Finalizers)
	}
	events := complianceEvents(t, ns, "OperatorPolicy", "watcher")
	if len(events) == 0 || !strings.HasPrefix(events[len(events)-1].Message, "NonCompliant; ") ||
		!strings.Contains(events[len(events)-1].Message, "is not created because the policy is not enforced") {
		t.Errorf("want a NonCompliant event saying what is not created, got %+v", events)
	}

	// An enforcing policy installs the operator; the inform one then reads it
	// as Compliant.
	createPolicy(t, ns, "installer", policySpec(ns, "inform-op", catalog, "inform-op.v1"))
	waitPolicy(t, ns, "watcher", "Compliant once installed", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionMatches"),
		related("ClusterServiceVersion", "inform-op.v1", compliant, "Resource found as expected"),
	))
}

// TestUpgradeGatedByAllowedCSVs is OperatorPolicy user story 2: a newer CSV is
// not approved until the policy allows it, then it is installed.
func TestUpgradeGatedByAllowedCSVs(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "upgrade")
	spec := policySpec(ns, "upgrade-op", catalog, "upgrade-op.v1")
	spec.Subscription.StartingCSV = "upgrade-op.v1"
	createPolicy(t, ns, "upgrade-op", spec)
	waitPolicy(t, ns, "upgrade-op", "Compliant at v1", all(
		compliance(policyv1.Compliant), related("ClusterServiceVersion", "upgrade-op.v1", compliant, "Resource found as expected")))

	if err := olm.Publish(ctx, catalogNS, catalog, bundle("upgrade-op", "upgrade-op.v2", "upgrade-op.v1")); err != nil {
		t.Fatal(err)
	}
	// The status is written after the approval decision of the same reconcile:
	// once it reports the upgrade as available, the plan was not approved.
	waitPolicy(t, ns, "upgrade-op", "upgrade available, not approved", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeInstallPlanCompliant, metav1.ConditionTrue, "UpgradeAvailable",
			"an upgrade to upgrade-op.v2 is available on the stable channel but not causing noncompliance"),
	))
	var pending *operatorsv1alpha1.InstallPlan
	for _, plan := range installPlans(t, ns) {
		if slices.Contains(plan.Spec.ClusterServiceVersionNames, "upgrade-op.v2") {
			pending = &plan
		}
	}
	if pending == nil || pending.Spec.Approved {
		t.Fatalf("the InstallPlan to upgrade-op.v2 must exist unapproved: %+v", pending)
	}

	editPolicy(t, ns, "upgrade-op", func(s *v1beta1.OperatorPolicySpec) {
		s.AllowedCSVs = []string{"upgrade-op.v1", "upgrade-op.v2"}
	})
	waitPolicy(t, ns, "upgrade-op", "Compliant at v2", all(
		compliance(policyv1.Compliant),
		related("ClusterServiceVersion", "upgrade-op.v2", compliant, "Resource found as expected"),
	))
	sub := subscription(ns, "upgrade-op")
	if !exists(t, sub) || sub.Status.InstalledCSV != "upgrade-op.v2" {
		t.Errorf("installedCSV %q, want upgrade-op.v2", sub.Status.InstalledCSV)
	}
	if exists(t, csv(ns, "upgrade-op.v1")) {
		t.Error("the replaced CSV upgrade-op.v1 is still there")
	}
}

// TestSharedInstallPlan: OLM resolves a namespace as a whole, so one
// InstallPlan installs two operators. It is approved only once every CSV in it
// is allowed by some enforcing policy of the namespace.
func TestSharedInstallPlan(t *testing.T) {
	ns := newNamespace(t, "shared")
	olm.Hold(ns)
	createPolicy(t, ns, "alpha", policySpec(ns, "alpha", catalog, "alpha.v1"))
	createPolicy(t, ns, "beta", policySpec(ns, "beta", catalog, "beta.v0"))
	testkit.Eventually(t, 30*time.Second, "both Subscriptions created", func() string {
		if !exists(t, subscription(ns, "alpha")) || !exists(t, subscription(ns, "beta")) {
			return "not yet"
		}
		return ""
	})
	olm.Release(ns)

	for _, name := range []string{"alpha", "beta"} {
		waitPolicy(t, ns, name, "the shared plan requires approval", all(
			compliance(policyv1.NonCompliant),
			condition(sharedop.TypeInstallPlanCompliant, metav1.ConditionFalse, "InstallPlanRequiresApproval",
				"the InstallPlan to install alpha.v1, beta.v1 requires approval"),
		))
	}
	plans := installPlans(t, ns)
	if len(plans) != 1 || !slices.Equal(plans[0].Spec.ClusterServiceVersionNames, []string{"alpha.v1", "beta.v1"}) {
		t.Fatalf("want one InstallPlan for alpha.v1 and beta.v1, got %+v", plans)
	}
	if plans[0].Spec.Approved {
		t.Fatal("the shared InstallPlan was approved although beta.v1 is allowed by no policy")
	}

	editPolicy(t, ns, "beta", func(s *v1beta1.OperatorPolicySpec) { s.AllowedCSVs = []string{"beta.v1"} })
	for _, name := range []string{"alpha", "beta"} {
		waitPolicy(t, ns, name, "Compliant after the shared plan", all(
			compliance(policyv1.Compliant),
			related("ClusterServiceVersion", name+".v1", compliant, "Resource found as expected"),
		))
	}
}

// TestCatalogSourceHealth: an unhealthy CatalogSource makes a policy
// NonCompliant only when statusConfig.catalogSourceUnhealthy says so; either
// way the condition records it.
func TestCatalogSourceHealth(t *testing.T) {
	ctx := context.Background()
	strict, lenient := newNamespace(t, "catalog-strict"), newNamespace(t, "catalog-lenient")
	spec := policySpec(strict, "health-op", flakyCatalog, "*")
	spec.StatusConfig = &v1beta1.StatusConfig{CatalogSourceUnhealthy: v1beta1.StatusNonCompliant}
	createPolicy(t, strict, "health-op", spec)
	createPolicy(t, lenient, "health-op", policySpec(lenient, "health-op", flakyCatalog, "*"))
	for _, ns := range []string{strict, lenient} {
		waitPolicy(t, ns, "health-op", "Compliant with a healthy catalog", all(
			compliance(policyv1.Compliant), condition(sharedop.TypeCatalogSourcesUnhealthy, metav1.ConditionFalse, "CatalogSourcesFound")))
	}

	if err := olm.SetCatalogState(ctx, catalogNS, flakyCatalog, "TRANSIENT_FAILURE"); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, strict, "health-op", "NonCompliant with an unhealthy catalog", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeCatalogSourcesUnhealthy, metav1.ConditionTrue, "CatalogSourcesFoundUnhealthy", "TRANSIENT_FAILURE"),
		related("CatalogSource", flakyCatalog, nonCompliant, "Resource found but its state is TRANSIENT_FAILURE"),
	))
	waitPolicy(t, lenient, "health-op", "Compliant, noting the unhealthy catalog", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeCatalogSourcesUnhealthy, metav1.ConditionTrue, "CatalogSourcesFoundUnhealthy", "but not causing noncompliance"),
	))

	if err := olm.SetCatalogState(ctx, catalogNS, flakyCatalog, "READY"); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, strict, "health-op", "Compliant again", all(
		compliance(policyv1.Compliant), condition(sharedop.TypeCatalogSourcesUnhealthy, metav1.ConditionFalse, "CatalogSourcesFound")))
}

// TestUnavailableDeployment: an operator Deployment that loses its
// availability makes the policy NonCompliant (the default), or only noted
// with statusConfig.deploymentsUnavailable Condition. The operator lives in a
// namespace of its own, which the policy creates.
func TestUnavailableDeployment(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "deploy")
	operatorNS := ns + "-operator" // does not exist yet
	spec := policySpec(ns, "deploy-op", catalog, "deploy-op.v1")
	spec.Subscription.Namespace = operatorNS
	createPolicy(t, ns, "deploy-op", spec)
	waitPolicy(t, ns, "deploy-op", "Compliant", all(
		compliance(policyv1.Compliant), related("Deployment", "deploy-op-controller", compliant, "Deployment Available")))
	if !exists(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}) {
		t.Fatalf("namespace %s was not created", operatorNS)
	}

	if err := olm.SetDeploymentAvailable(ctx, operatorNS, "deploy-op-controller", false); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, ns, "deploy-op", "NonCompliant with the Deployment unavailable", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeDeploymentCompliant, metav1.ConditionFalse, "DeploymentsUnavailable",
			"the deployments deploy-op-controller do not have their minimum availability"),
		related("Deployment", "deploy-op-controller", nonCompliant, "Deployment Unavailable"),
	))

	editPolicy(t, ns, "deploy-op", func(s *v1beta1.OperatorPolicySpec) {
		s.StatusConfig = &v1beta1.StatusConfig{DeploymentsUnavailable: v1beta1.StatusCondition}
	})
	waitPolicy(t, ns, "deploy-op", "Compliant, noting the unavailable Deployment", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeDeploymentCompliant, metav1.ConditionTrue, "DeploymentsUnavailable", "but not causing noncompliance"),
	))

	if err := olm.SetDeploymentAvailable(ctx, operatorNS, "deploy-op-controller", true); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, ns, "deploy-op", "Deployment available again", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeDeploymentCompliant, metav1.ConditionTrue, "DeploymentsAvailable"),
	))
}

// TestRemoval: deleting an enforcing policy removes its operator per
// removalBehavior before the policy goes; complianceType mustnothave removes
// it while the policy stays; an inform policy removes nothing.
func TestRemoval(t *testing.T) {
	type state struct{ subscription, csv, operatorGroup, installPlan, crd bool }
	cases := []struct {
		name     string
		pkg, crd string
		removal  v1beta1.RemovalBehavior
		// otherSubscription puts a Subscription nobody manages in the namespace.
		otherSubscription bool
		// remove removes the operator: deletes the policy, or edits it.
		remove func(t *testing.T, ns string)
		// policyStays is true when the policy is not deleted.
		policyStays bool
		want        state
	}{
		{
			name: "defaults: Subscription and CSV deleted, OperatorGroup deleted as unused, CRD and InstallPlan kept",
			pkg:  "remove-default", crd: "gadgets.remove-default.example.com",
			remove: deletePolicy,
			want:   state{installPlan: true, crd: true},
		},
		{
			name: "everything kept",
			pkg:  "remove-keep", crd: "gadgets.remove-keep.example.com",
			removal: v1beta1.RemovalBehavior{
				OperatorGroups: v1beta1.RemovalKeep, Subscriptions: v1beta1.RemovalKeep, ClusterServiceVersions: v1beta1.RemovalKeep,
				InstallPlans: v1beta1.RemovalKeep, CustomResourceDefinitions: v1beta1.RemovalKeep,
			},
			remove: deletePolicy,
			want:   state{subscription: true, csv: true, operatorGroup: true, installPlan: true, crd: true},
		},
		{
			name: "everything deleted",
			pkg:  "remove-all", crd: "gadgets.remove-all.example.com",
			removal: v1beta1.RemovalBehavior{
				OperatorGroups: v1beta1.RemovalDelete, Subscriptions: v1beta1.RemovalDelete, ClusterServiceVersions: v1beta1.RemovalDelete,
				InstallPlans: v1beta1.RemovalDelete, CustomResourceDefinitions: v1beta1.RemovalDelete,
			},
			remove: deletePolicy,
			want:   state{},
		},
		{
			name:              "OperatorGroup still used by another Subscription is kept",
			pkg:               "remove-shared-og",
			otherSubscription: true,
			remove:            deletePolicy,
			want:              state{operatorGroup: true, installPlan: true},
		},
		{
			name: "mustnothave removes while the policy stays",
			pkg:  "remove-mustnothave",
			remove: func(t *testing.T, ns string) {
				editPolicy(t, ns, "remove-mustnothave", func(s *v1beta1.OperatorPolicySpec) { s.ComplianceType = policyv1.MustNotHave })
			},
			policyStays: true,
			want:        state{installPlan: true},
		},
		{
			name: "an inform policy removes nothing",
			pkg:  "remove-inform",
			remove: func(t *testing.T, ns string) {
				editPolicy(t, ns, "remove-inform", func(s *v1beta1.OperatorPolicySpec) { s.RemediationAction = "inform" })
				waitPolicy(t, ns, "remove-inform", "no finalizer once inform", func(op *v1beta1.OperatorPolicy) string {
					if controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer) {
						return "finalizer still there"
					}
					return ""
				})
				deletePolicy(t, ns)
			},
			want: state{subscription: true, csv: true, operatorGroup: true, installPlan: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := newNamespace(t, tc.pkg)
			if tc.otherSubscription {
				other := subscription(ns, "unmanaged")
				other.Spec = &operatorsv1alpha1.SubscriptionSpec{Package: "unmanaged", CatalogSource: "elsewhere", CatalogSourceNamespace: catalogNS}
				if err := c.Create(ctx, other); err != nil {
					t.Fatal(err)
				}
			}
			spec := policySpec(ns, tc.pkg, catalog, "*")
			spec.RemovalBehavior = tc.removal
			createPolicy(t, ns, tc.pkg, spec)
			waitPolicy(t, ns, tc.pkg, "Compliant", compliance(policyv1.Compliant))
			plan := installPlanName(t, ns)

			tc.remove(t, ns)
			if tc.policyStays {
				waitPolicy(t, ns, tc.pkg, "Compliant with the operator removed", all(
					compliance(policyv1.Compliant),
					condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionNotPresent"),
					condition(sharedop.TypeClusterServiceVersionCompliant, metav1.ConditionTrue, "ClusterServiceVersionNotPresent"),
				))
			} else {
				testkit.Eventually(t, 30*time.Second, "the policy is gone", func() string {
					if exists(t, &v1beta1.OperatorPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.pkg}}) {
						return "still there"
					}
					op := &v1beta1.OperatorPolicy{}
					if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.pkg}, op); err == nil {
						return "being deleted: " + describe(op)
					}
					return ""
				})
			}

			got := state{
				subscription:  exists(t, subscription(ns, tc.pkg)),
				csv:           exists(t, csv(ns, tc.pkg+".v1")),
				operatorGroup: exists(t, operatorGroup(ns, defaultOG)),
				installPlan:   exists(t, &operatorsv1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: plan}}),
				crd:           tc.crd != "" && crdExists(t, tc.crd),
			}
			want := tc.want
			if tc.crd == "" {
				want.crd = false
			}
			if got != want {
				t.Errorf("after removal: got %+v, want %+v", got, want)
			}
			if tc.otherSubscription && !exists(t, subscription(ns, "unmanaged")) {
				t.Error("removal touched a Subscription that is not the policy's")
			}
			if !exists(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.pkg + "-controller"}}) {
				t.Error("removal deleted the operator's Deployment, which is OLM's to remove")
			}
		})
	}
}

func deletePolicy(t *testing.T, ns string) {
	t.Helper()
	list := &v1beta1.OperatorPolicyList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if err := c.Delete(context.Background(), &list.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
}

func crdExists(t *testing.T, name string) bool {
	t.Helper()
	crd := &metav1.PartialObjectMetadata{}
	crd.APIVersion, crd.Kind, crd.Name = "apiextensions.k8s.io/v1", "CustomResourceDefinition", name
	return exists(t, crd)
}

// TestInvalidPolicy: a policy Normalize rejects, or one that cannot create its
// Subscription, is reported on its status and by an event naming the fields;
// nothing is created for it.
func TestInvalidPolicy(t *testing.T) {
	ns := newNamespace(t, "invalid")
	bad := policySpec(ns, "Bad_Name", catalog, "*")
	bad.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Namespace: "elsewhere"}
	createPolicy(t, ns, "bad", bad)
	waitPolicy(t, ns, "bad", "invalid spec reported", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			"OperatorPolicy "+ns+"/bad: [spec.subscription.name: Invalid value: \"Bad_Name\"", "spec.operatorGroup.namespace: Invalid value: \"elsewhere\""),
	))
	events := complianceEvents(t, ns, "OperatorPolicy", "bad")
	if len(events) == 0 || !strings.HasPrefix(events[len(events)-1].Message, "NonCompliant; OperatorPolicy "+ns+"/bad: [spec.subscription.name") {
		t.Errorf("want a NonCompliant event naming the field, got %+v", events)
	}

	noSource := policySpec(ns, "install-op", "", "*")
	noSource.Subscription.SourceNamespace = ""
	createPolicy(t, ns, "no-source", noSource)
	waitPolicy(t, ns, "no-source", "missing source reported", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			"spec.subscription: Invalid value: ", "the PackageManifest was not found (unset: source, sourceNamespace)"),
	))
	if exists(t, subscription(ns, "install-op")) || exists(t, operatorGroup(ns, defaultOG)) {
		t.Error("OLM objects were created for a policy that cannot create its Subscription")
	}
}

// TestApprovalSpellingsDisagree (issue 29): a policy whose
// spec.subscription.installPlanApproval disagrees with upgradeApproval is
// admitted, as OCM's CRD admits any installPlanApproval, and reported as OCM's
// controller reports one: NonCompliant, ValidPolicySpec False with reason
// InvalidPolicySpec and a message naming the field, a NonCompliant event, and
// nothing created. Once the spellings agree it installs.
func TestApprovalSpellingsDisagree(t *testing.T) {
	ns := newNamespace(t, "approval")
	spec := policySpec(ns, "approval-op", catalog)
	spec.Subscription.InstallPlanApproval, spec.UpgradeApproval = operatorsv1alpha1.ApprovalAutomatic, "None"
	createPolicy(t, ns, "approval", spec)
	waitPolicy(t, ns, "approval", "the disagreement reported", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			`OperatorPolicy `+ns+`/approval: spec.subscription.installPlanApproval: Invalid value: "Automatic": disagrees with spec.upgradeApproval ("None")`),
	))
	events := complianceEvents(t, ns, "OperatorPolicy", "approval")
	if len(events) == 0 || !strings.HasPrefix(events[len(events)-1].Message, "NonCompliant; OperatorPolicy "+ns+"/approval: spec.subscription.installPlanApproval") {
		t.Errorf("want a NonCompliant event naming the field, got %+v", events)
	}
	if exists(t, subscription(ns, "approval-op")) || exists(t, operatorGroup(ns, defaultOG)) {
		t.Error("OLM objects were created for a policy whose approval spellings disagree")
	}

	editPolicy(t, ns, "approval", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.InstallPlanApproval = "" })
	waitPolicy(t, ns, "approval", "Compliant once the spellings agree", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionTrue, ""),
	))
}
