package operatorpolicy

import (
	"reflect"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

const csv340 = "strimzi-cluster-operator.v0.34.0"

// installedInAppNS is story 6's operator as installed in strimzi-app-one: its
// Subscription, the default OperatorGroup, the CSV it runs (owning two CRDs and
// an APIService), an older labelled CSV, a copy from elsewhere, its own
// InstallPlan, one shared with etcd and one of etcd alone.
func installedInAppNS() Observed {
	csv := csvObj(appNS, csv350, operatorsv1alpha1.CSVPhaseSucceeded, strimziDep)
	csv.Spec.CustomResourceDefinitions.Owned = []operatorsv1alpha1.CRDDescription{{Name: "kafkas.kafka.strimzi.io"}, {Name: "kafkatopics.kafka.strimzi.io"}}
	csv.Spec.APIServiceDefinitions.Owned = []operatorsv1alpha1.APIServiceDescription{{Group: "webhooks.strimzi.io", Version: "v1"}}
	older := csvObj(appNS, csv340, operatorsv1alpha1.CSVPhaseReplacing)
	older.Labels = map[string]string{"operators.coreos.com/" + strimzi + "." + appNS: ""}
	older.Spec.CustomResourceDefinitions.Owned = []operatorsv1alpha1.CRDDescription{{Name: "kafkas.kafka.strimzi.io"}}
	copied := csvObj(appNS, "copied.v1", operatorsv1alpha1.CSVPhaseSucceeded)
	copied.Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: opsNS, "operators.coreos.com/" + strimzi + "." + appNS: ""}
	return Observed{
		OperatorGroups: []operatorsv1.OperatorGroup{operatorGroupObj(appNS, DefaultOperatorGroupName), operatorGroupObj(opsNS, DefaultOperatorGroupName)},
		Subscriptions:  []operatorsv1alpha1.Subscription{subscriptionObj(appNS, strimzi, csv350, csv350)},
		InstallPlans: []operatorsv1alpha1.InstallPlan{
			withLookup(installPlanObj(appNS, "install-own", 1, operatorsv1alpha1.InstallPlanPhaseComplete, true, csv350), csv350, strimzi),
			withLookup(withLookup(installPlanObj(appNS, "install-shared", 2, operatorsv1alpha1.InstallPlanPhaseComplete, true, csv340, etcd094),
				csv340, strimzi), etcd094, etcd),
			installPlanObj(appNS, "install-etcd", 3, operatorsv1alpha1.InstallPlanPhaseComplete, true, etcd094),
			installPlanObj(opsNS, "install-elsewhere", 1, operatorsv1alpha1.InstallPlanPhaseComplete, true, csv350),
		},
		ClusterServiceVersions: []operatorsv1alpha1.ClusterServiceVersion{csv, older, copied, csvObj(opsNS, csv350, operatorsv1alpha1.CSVPhaseSucceeded)},
	}
}

func stepsOf(steps []RemovalStep) []string {
	var out []string
	for _, s := range steps {
		action := "keep"
		if s.Delete {
			action = "delete"
		}
		out = append(out, action+" "+s.Object.Kind+" "+objectRef(s.Object.Metadata.Namespace, s.Object.Metadata.Name))
	}
	return out
}

func TestPlanRemoval(t *testing.T) {
	story6 := normalized(t, 6, nil)
	withRemoval := func(rb v1beta1.RemovalBehavior) Policy {
		return normalized(t, 6, func(s *v1beta1.OperatorPolicySpec) { s.RemovalBehavior = rb })
	}
	withEtcd := installedInAppNS()
	withEtcd.Subscriptions = append(withEtcd.Subscriptions, subscriptionObj(appNS, etcd, etcd094, etcd094))
	named := normalized(t, 5, nil)
	namedAndPreexisting := installedInAppNS()
	namedAndPreexisting.OperatorGroups = []operatorsv1.OperatorGroup{operatorGroupObj(appNS, "global")}
	namedPresent := installedInAppNS()
	namedPresent.OperatorGroups = []operatorsv1.OperatorGroup{operatorGroupObj(appNS, "og-strimzi", appNS)}
	noSubscription := installedInAppNS()
	noSubscription.Subscriptions = nil

	operatorObjects := func(planAction, crdAction, apiAction, ogAction string) []string {
		return []string{
			"delete Subscription strimzi-app-one/" + strimzi,
			planAction + " InstallPlan strimzi-app-one/install-own",
			"keep InstallPlan strimzi-app-one/install-shared",
			"delete ClusterServiceVersion strimzi-app-one/" + csv340,
			"delete ClusterServiceVersion strimzi-app-one/" + csv350,
			crdAction + " CustomResourceDefinition kafkas.kafka.strimzi.io",
			crdAction + " CustomResourceDefinition kafkatopics.kafka.strimzi.io",
			apiAction + " APIService v1.webhooks.strimzi.io",
			ogAction + " OperatorGroup strimzi-app-one/" + DefaultOperatorGroupName,
		}
	}
	tests := []struct {
		name     string
		policy   Policy
		observed Observed
		want     []string
		reasons  map[int]string
	}{
		{"story 6 defaults, the operator alone", story6, installedInAppNS(), operatorObjects("keep", "keep", "keep", "delete"), map[int]string{
			0: "spec.removalBehavior.subscriptions is Delete",
			1: "spec.removalBehavior.installPlans is Keep",
			2: "the InstallPlan is shared with other operators",
			5: "spec.removalBehavior.customResourceDefinitions is Keep",
			7: "spec.removalBehavior.apiServiceDefinitions is Keep",
			8: "spec.removalBehavior.operatorGroups is DeleteIfUnused and no other Subscription remains in the namespace",
		}},
		{"DeleteIfUnused keeps an OperatorGroup another Subscription uses", story6, withEtcd, operatorObjects("keep", "keep", "keep", "keep"),
			map[int]string{8: "spec.removalBehavior.operatorGroups is DeleteIfUnused and Subscription etcd remains in the namespace"}},
		{"DeleteIfUnused keeps the OperatorGroup of a kept Subscription",
			withRemoval(v1beta1.RemovalBehavior{Subscriptions: "Keep"}), installedInAppNS(), append([]string{"keep Subscription strimzi-app-one/" + strimzi},
				append(operatorObjects("keep", "keep", "keep", "keep")[1:8], "keep OperatorGroup strimzi-app-one/"+DefaultOperatorGroupName)...),
			map[int]string{8: "spec.removalBehavior.operatorGroups is DeleteIfUnused and Subscription " + strimzi + " remains in the namespace"}},
		{"everything Delete", withRemoval(v1beta1.RemovalBehavior{OperatorGroups: "Delete", InstallPlans: "Delete",
			CustomResourceDefinitions: "Delete", APIServiceDefinitions: "Delete"}), withEtcd,
			operatorObjects("delete", "delete", "delete", "delete"), map[int]string{8: "spec.removalBehavior.operatorGroups is Delete"}},
		{"OperatorGroup Keep", withRemoval(v1beta1.RemovalBehavior{OperatorGroups: "Keep"}), installedInAppNS(),
			operatorObjects("keep", "keep", "keep", "keep"), nil},
		{"an OperatorGroup the policy did not make is never touched", named, namedAndPreexisting,
			operatorObjects("keep", "keep", "keep", "")[:8], nil},
		{"the named OperatorGroup", named, namedPresent,
			append(operatorObjects("keep", "keep", "keep", "")[:8], "delete OperatorGroup strimzi-app-one/og-strimzi"), nil},
		{"without the Subscription, labelled CSVs and looked-up plans are still found", story6, noSubscription, []string{
			"keep InstallPlan strimzi-app-one/install-own",
			"keep InstallPlan strimzi-app-one/install-shared",
			"delete ClusterServiceVersion strimzi-app-one/" + csv340,
			"keep CustomResourceDefinition kafkas.kafka.strimzi.io",
			"delete OperatorGroup strimzi-app-one/" + DefaultOperatorGroupName,
		}, nil},
		{"nothing left", story6, Observed{}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps := PlanRemoval(tc.policy, tc.observed)
			if got := stepsOf(steps); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
			for i, reason := range tc.reasons {
				if steps[i].Reason != reason {
					t.Errorf("step %d reason %q, want %q", i, steps[i].Reason, reason)
				}
			}
		})
	}
}

func TestEvaluateRemoval(t *testing.T) {
	story6Removing := normalized(t, 6, func(s *v1beta1.OperatorPolicySpec) { s.ComplianceType = "mustnothave" })
	informRemoving := normalized(t, 6, func(s *v1beta1.OperatorPolicySpec) {
		s.ComplianceType, s.RemediationAction = "MustNotHave", "inform"
	})
	runEvaluateCases(t, []evaluateCase{
		{
			name: "operator still installed", policy: story6Removing, observed: installedInAppNS(), want: policyv1.NonCompliant,
			conditions: map[string]string{
				TypeOperatorGroupCompliant:            "False/OperatorGroupPresent",
				TypeSubscriptionCompliant:             "False/SubscriptionPresent",
				TypeInstallPlanCompliant:              "True/InstallPlanKept",
				TypeClusterServiceVersionCompliant:    "False/ClusterServiceVersionPresent",
				TypeCustomResourceDefinitionCompliant: "True/CustomResourceDefinitionKept",
				TypeAPIServiceCompliant:               "True/APIServiceKept",
				TypeDeploymentCompliant:               "",
				TypeCatalogSourcesUnhealthy:           "",
			},
			related: map[string]string{
				"Subscription strimzi-app-one/" + strimzi:                   "NonCompliant: Resource found but should not exist",
				"CustomResourceDefinition kafkas.kafka.strimzi.io":          ": spec.removalBehavior.customResourceDefinitions is Keep",
				"InstallPlan strimzi-app-one/install-shared":                ": the InstallPlan is shared with other operators",
				"ClusterServiceVersion strimzi-app-one/" + csv350:           "NonCompliant: Resource found but should not exist",
				"OperatorGroup strimzi-app-one/" + DefaultOperatorGroupName: "NonCompliant: Resource found but should not exist",
			},
			messages: []string{
				"the Subscription (" + strimzi + ") is present",
				"the ClusterServiceVersions (" + csv340 + ", " + csv350 + ") are present",
				"the policy specifies to keep the CustomResourceDefinition",
			},
		},
		{
			name: "inform", policy: informRemoving, observed: installedInAppNS(), want: policyv1.NonCompliant,
			messages: []string{"the Subscription (" + strimzi + ") is present and not deleted because the policy is not enforced"},
		},
		{
			name: "operator removed", policy: story6Removing, observed: Observed{}, want: policyv1.Compliant,
			conditions: map[string]string{
				TypeOperatorGroupCompliant:            "True/OperatorGroupNotPresent",
				TypeSubscriptionCompliant:             "True/SubscriptionNotPresent",
				TypeClusterServiceVersionCompliant:    "True/ClusterServiceVersionNotPresent",
				TypeCustomResourceDefinitionCompliant: "True/CustomResourceDefinitionNotPresent",
			},
			messages: []string{"the Subscription is not present"},
		},
	})
}
