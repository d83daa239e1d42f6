package operatorpolicy

import (
	"reflect"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// The tests below walk through the six OperatorPolicy user stories (install,
// gated upgrade, upgrade available, health, own namespace, clean-up on
// removal; examples/api/operator-policy.yaml), using the stories' policies as
// testdata/stories has them.

// Story 1: install a specific version from a specific source in AllNamespaces
// mode; Compliant once the InstallPlan is complete and the Deployments healthy.
func TestStory1(t *testing.T) {
	p := normalized(t, 1, nil)

	sub := DesiredSubscription(p)
	if sub.Namespace != opsNS || sub.Spec.CatalogSource != catalog || sub.Spec.StartingCSV != csv350 ||
		sub.Spec.InstallPlanApproval != operatorsv1alpha1.ApprovalManual {
		t.Errorf("desired Subscription %+v %+v", sub.ObjectMeta, sub.Spec)
	}
	og, err := DesiredOperatorGroup(p, nil, []operatorsv1alpha1.InstallMode{{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true}})
	if err != nil || og.Namespace != opsNS || len(og.Spec.TargetNamespaces) != 0 || og.Spec.Selector != nil {
		t.Errorf("desired OperatorGroup %+v, %v; want AllNamespaces in %s", og, err, opsNS)
	}

	subs := []operatorsv1alpha1.Subscription{subscriptionObj(opsNS, strimzi, "", csv350)}
	first := withLookup(installPlanObj(opsNS, "install-1", 1, requiresApproval, false, csv350), csv350, strimzi)
	if d := DecideInstallPlanApproval(&first, []Policy{p}, subs); !d.Approve {
		t.Errorf("the allowed first install was not approved: %s", d.Reason)
	}
	other := withLookup(installPlanObj(opsNS, "install-1", 1, requiresApproval, false, csv351), csv351, strimzi)
	if d := DecideInstallPlanApproval(&other, []Policy{p}, subs); d.Approve {
		t.Errorf("an install of %s was approved: %s", csv351, d.Reason)
	}

	installing := healthyInstall(t, p, csv350)
	installing.Subscriptions[0].Status.InstalledCSV = ""
	installing.InstallPlans[0].Status.Phase = operatorsv1alpha1.InstallPlanPhaseInstalling
	installing.ClusterServiceVersions[0].Status.Phase = operatorsv1alpha1.CSVPhaseInstalling
	installing.Deployments[0].Status.UnavailableReplicas = 1
	if ev := Evaluate(p, installing, nil, t0); ev.Compliance != policyv1.NonCompliant {
		t.Errorf("installing: %s", ev.EventMessage)
	}
	if ev := Evaluate(p, healthyInstall(t, p, csv350), nil, t0); ev.Compliance != policyv1.Compliant {
		t.Errorf("installed and healthy: %s", ev.EventMessage)
	}
	unhealthy := healthyInstall(t, p, csv350)
	unhealthy.Deployments[0].Status.UnavailableReplicas = 1
	if ev := Evaluate(p, unhealthy, nil, t0); ev.Compliance != policyv1.NonCompliant {
		t.Errorf("installed, Deployment unavailable: %s", ev.EventMessage)
	}
}

// Story 2: the upgrade to v0.35.1 proceeds only once the policy allows it.
func TestStory2(t *testing.T) {
	story1, story2 := normalized(t, 1, nil), normalized(t, 2, nil)
	pending := withPendingUpgrade(healthyInstall(t, story2, csv350))
	plan := pending.InstallPlans[1]

	if d := DecideInstallPlanApproval(&plan, []Policy{story1}, pending.Subscriptions); d.Approve {
		t.Errorf("story 1 approved the upgrade: %s", d.Reason)
	}
	if d := DecideInstallPlanApproval(&plan, []Policy{story2}, pending.Subscriptions); !d.Approve {
		t.Errorf("story 2 did not approve the upgrade: %s", d.Reason)
	}
	if ev := Evaluate(story2, healthyInstall(t, story2, csv351), nil, t0); ev.Compliance != policyv1.Compliant {
		t.Errorf("story 2 after the upgrade: %s", ev.EventMessage)
	}
	ev := Evaluate(story1, healthyInstall(t, story1, csv351), nil, t0)
	if ev.Compliance != policyv1.NonCompliant || conditionsOf(ev)[TypeClusterServiceVersionCompliant] != "False/UnapprovedVersion" {
		t.Errorf("story 1 with %s installed: %s", csv351, ev.EventMessage)
	}
}

// Story 3: NonCompliant while an upgrade is available, naming the version.
func TestStory3(t *testing.T) {
	p := normalized(t, 3, nil)
	obs := withPendingUpgrade(healthyInstall(t, p, csv350))
	obs.Subscriptions[0].Status.Conditions = []operatorsv1alpha1.SubscriptionCondition{
		subscriptionCondition(operatorsv1alpha1.SubscriptionInstallPlanPending, "RequiresApproval", "")}
	ev := Evaluate(p, obs, nil, t0)

	want := metav1.Condition{Type: TypeCompliant, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0),
		Reason: "UpgradeAvailable", Message: "an upgrade to " + csv351 + " is available on the stable channel"}
	if got := conditionOf(t, ev, TypeCompliant); ev.Compliance != policyv1.NonCompliant || !reflect.DeepEqual(got, want) {
		t.Errorf("%s, Compliant condition %+v; want NonCompliant, %+v", ev.Compliance, got, want)
	}
	if got := conditionsOf(ev)["InstallPlanPending"]; got != "True/RequiresApproval" {
		t.Errorf("InstallPlanPending %q", got)
	}
	if got := relatedOf(ev)["InstallPlan openshift-operators/install-2"]; got != "NonCompliant: InstallPlan not approved" {
		t.Errorf("related InstallPlan %q", got)
	}
	if d := DecideInstallPlanApproval(&obs.InstallPlans[1], []Policy{p}, obs.Subscriptions); d.Approve {
		t.Errorf("the upgrade was approved: %s", d.Reason)
	}
	// Without upgradesAvailable: NonCompliant, the same upgrade is reported only.
	if ev := Evaluate(normalized(t, 1, nil), obs, nil, t0); ev.Compliance != policyv1.Compliant ||
		!strings.Contains(ev.EventMessage, "is available on the stable channel but not causing noncompliance") {
		t.Errorf("story 1 with the upgrade pending: %s", ev.EventMessage)
	}
}

// Story 4: one inform policy monitors the operator; NonCompliant whenever
// something unhealthy or an upgrade in progress may impact it.
func TestStory4(t *testing.T) {
	p := normalized(t, 4, nil)
	healthy := healthyInstall(t, p, csv350)
	ev := Evaluate(p, healthy, nil, t0)
	if ev.Compliance != policyv1.Compliant {
		t.Fatalf("healthy: %s", ev.EventMessage)
	}
	var kinds []string
	for _, r := range ev.RelatedObjects {
		kinds = append(kinds, r.Object.Kind)
	}
	if want := []string{"CatalogSource", "ClusterServiceVersion", "Deployment", "InstallPlan", "OperatorGroup", "Subscription"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("related kinds %v, want %v", kinds, want)
	}

	unhealthyCatalog := healthyInstall(t, p, csv350)
	unhealthyCatalog.CatalogSource = catalogObj("TRANSIENT_FAILURE")
	unavailable := healthyInstall(t, p, csv350)
	unavailable.Deployments[0].Status.UnavailableReplicas = 1
	upgrading := healthyInstall(t, p, csv350)
	upgrading.Subscriptions[0].Status.CurrentCSV = csv351
	upgrading.InstallPlans = append(upgrading.InstallPlans,
		installPlanObj(opsNS, "install-2", 2, operatorsv1alpha1.InstallPlanPhaseInstalling, true, csv351))
	for name, obs := range map[string]Observed{"catalog unhealthy": unhealthyCatalog, "deployment unavailable": unavailable, "upgrading": upgrading} {
		if ev := Evaluate(p, obs, nil, t0); ev.Compliance != policyv1.NonCompliant {
			t.Errorf("%s: %s", name, ev.EventMessage)
		}
	}

	available := withPendingUpgrade(healthyInstall(t, p, csv350))
	ev = Evaluate(p, available, nil, t0)
	if ev.Compliance != policyv1.Compliant || conditionsOf(ev)[TypeInstallPlanCompliant] != "True/UpgradeAvailable" {
		t.Errorf("upgrade available (upgradesAvailable: Condition): %s", ev.EventMessage)
	}
	if d := DecideInstallPlanApproval(&available.InstallPlans[1], []Policy{p}, available.Subscriptions); d.Approve {
		t.Errorf("an inform policy approved: %s", d.Reason)
	}
}

// Story 5: install into one namespace with a named OperatorGroup; Compliant
// once the Deployments are available.
func TestStory5(t *testing.T) {
	p := normalized(t, 5, nil)
	og, err := DesiredOperatorGroup(p, nil, nil)
	if err != nil || og.Name != "og-strimzi" || og.Namespace != appNS || !reflect.DeepEqual(og.Spec.TargetNamespaces, []string{appNS}) {
		t.Fatalf("desired OperatorGroup %+v, %v", og, err)
	}
	if sub := DesiredSubscription(p); sub.Namespace != appNS || sub.Spec.InstallPlanApproval != operatorsv1alpha1.ApprovalAutomatic {
		t.Errorf("desired Subscription %+v %+v", sub.ObjectMeta, sub.Spec)
	}

	obs := healthyInstall(t, p, csv350)
	obs.Deployments[0].Status.UnavailableReplicas = 1
	if ev := Evaluate(p, obs, nil, t0); ev.Compliance != policyv1.NonCompliant {
		t.Errorf("deployment unavailable: %s", ev.EventMessage)
	}
	ev := Evaluate(p, healthyInstall(t, p, csv350), nil, t0)
	if ev.Compliance != policyv1.Compliant || relatedOf(ev)["OperatorGroup strimzi-app-one/og-strimzi"] != "Compliant: Resource found as expected" {
		t.Errorf("available: %s %v", ev.EventMessage, relatedOf(ev))
	}
}

// Story 6: removing the policy cleans up what it specifies; the
// removalBehavior given is the default made explicit.
func TestStory6(t *testing.T) {
	p := normalized(t, 6, nil)
	if implicit := normalized(t, 5, nil); !reflect.DeepEqual(p.Removal, implicit.Removal) {
		t.Errorf("story 6's removalBehavior %+v is not the default %+v", p.Removal, implicit.Removal)
	}
	if !RemovesOnDeletion(p, DeletedByUser) {
		t.Fatalf("deleting story 6's policy does not remove its operator: %+v", p)
	}
	removing := p
	removing.Remove = true

	obs := healthyInstall(t, removing, csv350)
	obs.ClusterServiceVersions[0].Spec.CustomResourceDefinitions.Owned = []operatorsv1alpha1.CRDDescription{{Name: "kafkas.kafka.strimzi.io"}}
	want := []string{
		"delete Subscription strimzi-app-one/" + strimzi,
		"keep InstallPlan strimzi-app-one/install-1",
		"delete ClusterServiceVersion strimzi-app-one/" + csv350,
		"keep CustomResourceDefinition kafkas.kafka.strimzi.io",
		"delete OperatorGroup strimzi-app-one/" + DefaultOperatorGroupName,
	}
	if got := stepsOf(PlanRemoval(removing, obs)); !reflect.DeepEqual(got, want) {
		t.Errorf("removal plan\n%q\nwant\n%q", got, want)
	}
	if ev := Evaluate(removing, obs, nil, t0); ev.Compliance != policyv1.NonCompliant {
		t.Errorf("before removal: %s", ev.EventMessage)
	}
	kept := Observed{OperatorGroups: []operatorsv1.OperatorGroup{}, InstallPlans: obs.InstallPlans}
	if ev := Evaluate(removing, kept, nil, t0); ev.Compliance != policyv1.Compliant {
		t.Errorf("after removal: %s", ev.EventMessage)
	}
}
