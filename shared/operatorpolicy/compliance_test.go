package operatorpolicy

import (
	"errors"
	"strings"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

type evaluateCase struct {
	name     string
	policy   Policy
	observed Observed
	want     policyv1.ComplianceState
	// conditions maps types to "Status/Reason"; "" means the type must be absent.
	conditions map[string]string
	// related maps "Kind namespace/name" to "compliant: reason".
	related map[string]string
	// messages must all appear in the event message.
	messages []string
}

func runEvaluateCases(t *testing.T, tests []evaluateCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := Evaluate(tc.policy, tc.observed, nil, t0)
			if ev.Compliance != tc.want {
				t.Errorf("compliance %s, want %s (%s)", ev.Compliance, tc.want, ev.EventMessage)
			}
			if !strings.HasPrefix(ev.EventMessage, string(tc.want)+"; ") {
				t.Errorf("event message %q must start with %q", ev.EventMessage, tc.want+"; ")
			}
			if c := ev.Conditions[0]; c.Type != TypeCompliant || c.Status != conditionStatus(tc.want == policyv1.Compliant) {
				t.Errorf("first condition %+v must be Compliant=%t", c, tc.want == policyv1.Compliant)
			}
			got := conditionsOf(ev)
			for typ, want := range tc.conditions {
				if got[typ] != want {
					t.Errorf("condition %s = %q, want %q", typ, got[typ], want)
				}
			}
			related := relatedOf(ev)
			for obj, want := range tc.related {
				if related[obj] != want {
					t.Errorf("related %s = %q, want %q (all: %v)", obj, related[obj], want, related)
				}
			}
			for _, m := range tc.messages {
				if !strings.Contains(ev.EventMessage, m) {
					t.Errorf("event message %q lacks %q", ev.EventMessage, m)
				}
			}
		})
	}
}

func TestEvaluateHealthyAndMissing(t *testing.T) {
	story1 := normalized(t, 1, nil)
	story4 := normalized(t, 4, nil)
	created := healthyInstall(t, story1, csv350)
	created.Created = Created{OperatorGroup: true, Subscription: true}
	runEvaluateCases(t, []evaluateCase{
		{
			name: "story 1 installed and healthy", policy: story1, observed: healthyInstall(t, story1, csv350), want: policyv1.Compliant,
			conditions: map[string]string{
				TypeValidPolicySpec:                "True/PolicyValidated",
				TypeOperatorGroupCompliant:         "True/OperatorGroupMatches",
				TypeSubscriptionCompliant:          "True/SubscriptionMatches",
				TypeInstallPlanCompliant:           "True/NoInstallPlansRequiringApproval",
				TypeClusterServiceVersionCompliant: "True/InstallSucceeded",
				TypeDeploymentCompliant:            "True/DeploymentsAvailable",
				TypeCatalogSourcesUnhealthy:        "False/CatalogSourcesFound",
				TypeNoDeprecations:                 "True/NoDeprecations",
				TypeMinorChannelUpgradeAvailable:   "",
			},
			related: map[string]string{
				"OperatorGroup openshift-operators/" + DefaultOperatorGroupName: "Compliant: Resource found as expected",
				"Subscription openshift-operators/" + strimzi:                   "Compliant: Resource found as expected",
				"InstallPlan openshift-operators/install-1":                     "Compliant: The InstallPlan is Complete",
				"ClusterServiceVersion openshift-operators/" + csv350:           "Compliant: Resource found as expected",
				"Deployment openshift-operators/" + strimziDep:                  "Compliant: Deployment Available",
				"CatalogSource openshift-marketplace/" + catalog:                "Compliant: Resource found as expected",
			},
			messages: []string{"Compliant; the policy spec is valid, the OperatorGroup matches what is required by the policy, " +
				"the Subscription matches what is required by the policy, no InstallPlans requiring approval were found, " +
				"ClusterServiceVersion (" + csv350 + ") - install strategy completed with no errors, " +
				"all operator Deployments have their minimum availability, CatalogSource was found, there are no relevant deprecations"},
		},
		{
			name: "enforced, just created", policy: story1, observed: created, want: policyv1.Compliant,
			conditions: map[string]string{
				TypeOperatorGroupCompliant: "True/OperatorGroupCreated",
				TypeSubscriptionCompliant:  "True/SubscriptionCreated",
			},
			related: map[string]string{"Subscription openshift-operators/" + strimzi: "Compliant: K8s creation success"},
			messages: []string{"the OperatorGroup required by the policy was created",
				"the Subscription required by the policy was created"},
		},
		{
			name: "enforced, nothing there yet", policy: story1, observed: Observed{}, want: policyv1.NonCompliant,
			conditions: map[string]string{
				TypeOperatorGroupCompliant:         "False/OperatorGroupMissing",
				TypeSubscriptionCompliant:          "False/SubscriptionMissing",
				TypeInstallPlanCompliant:           "True/NoInstallPlansFound",
				TypeClusterServiceVersionCompliant: "False/RelevantCSVNotFound",
				TypeDeploymentCompliant:            "True/NoRelevantDeployments",
				TypeCatalogSourcesUnhealthy:        "True/CatalogSourcesNotFound",
				TypeNoDeprecations:                 "",
			},
			related: map[string]string{
				"Subscription openshift-operators/" + strimzi:                   "NonCompliant: Resource not found but should exist",
				"OperatorGroup openshift-operators/" + DefaultOperatorGroupName: "NonCompliant: Resource not found but should exist",
			},
			messages: []string{"NonCompliant; the policy spec is valid, the OperatorGroup required by the policy was not found, " +
				"the Subscription required by the policy was not found, ",
				"CatalogSource 'community-operators' was not found but not causing noncompliance"},
		},
		{
			name: "inform (story 4), nothing there", policy: story4, observed: Observed{}, want: policyv1.NonCompliant,
			conditions: map[string]string{
				TypeSubscriptionCompliant:   "False/SubscriptionMissing",
				TypeCatalogSourcesUnhealthy: "True/CatalogSourcesNotFound",
			},
			messages: []string{
				"the OperatorGroup required by the policy was not found and is not created because the policy is not enforced",
				"the Subscription required by the policy was not found and is not created because the policy is not enforced",
				"CatalogSource 'community-operators' was not found",
			},
		},
	})
	ev := Evaluate(story1, created, nil, t0)
	for _, r := range ev.RelatedObjects {
		wantCreated := r.Object.Kind == "Subscription" || r.Object.Kind == "OperatorGroup"
		if gotCreated := r.Properties != nil && r.Properties.CreatedByPolicy != nil && *r.Properties.CreatedByPolicy; gotCreated != wantCreated {
			t.Errorf("%s createdByPolicy %t, want %t", r.Object.Kind, gotCreated, wantCreated)
		}
	}
}

func TestEvaluateOperatorGroup(t *testing.T) {
	story1 := normalized(t, 1, nil)
	story5 := normalized(t, 5, nil)
	story5Inform := normalized(t, 5, func(s *v1beta1.OperatorPolicySpec) { s.RemediationAction = "inform" })
	story5OLMFields := normalized(t, 5, func(s *v1beta1.OperatorPolicySpec) {
		s.OperatorGroup.Extra = map[string]runtime.RawExtension{
			"upgradeStrategy": {Raw: []byte(`"TechPreviewUnsafeFailForward"`)}, "staticProvidedAPIs": {Raw: []byte(`true`)},
		}
	})
	withOLMFields := func(og operatorsv1.OperatorGroup) operatorsv1.OperatorGroup {
		og.Spec.UpgradeStrategy, og.Spec.StaticProvidedAPIs = operatorsv1.UpgradeStrategyUnsafeFailForward, true
		return og
	}
	with := func(p Policy, ogs ...operatorsv1.OperatorGroup) Observed {
		obs := healthyInstall(t, p, csv350)
		obs.OperatorGroups = ogs
		return obs
	}
	noAllNamespaces := with(story1)
	noAllNamespaces.ClusterServiceVersions[0].Spec.InstallModes = []operatorsv1alpha1.InstallMode{
		{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: false}}
	runEvaluateCases(t, []evaluateCase{
		{
			name: "several OperatorGroups", policy: story1, want: policyv1.NonCompliant,
			observed:   with(story1, operatorGroupObj(opsNS, "a"), operatorGroupObj(opsNS, "b")),
			conditions: map[string]string{TypeOperatorGroupCompliant: "False/TooManyOperatorGroups"},
			related:    map[string]string{"OperatorGroup openshift-operators/a": "NonCompliant: Resource found but does not match"},
			messages:   []string{"namespace openshift-operators has several OperatorGroups (a, b)"},
		},
		{
			name: "a preexisting OperatorGroup is used", policy: story1, want: policyv1.Compliant,
			observed:   with(story1, operatorGroupObj(opsNS, "global-operators")),
			conditions: map[string]string{TypeOperatorGroupCompliant: "True/PreexistingOperatorGroupFound"},
			related:    map[string]string{"OperatorGroup openshift-operators/global-operators": "Compliant: Resource found as expected"},
		},
		{
			name: "the named OperatorGroup matches (story 5)", policy: story5, want: policyv1.Compliant,
			observed:   with(story5, operatorGroupObj(appNS, "og-strimzi", appNS)),
			conditions: map[string]string{TypeOperatorGroupCompliant: "True/OperatorGroupMatches"},
		},
		{
			name: "the named OperatorGroup has other targets", policy: story5, want: policyv1.NonCompliant,
			observed:   with(story5, operatorGroupObj(appNS, "og-strimzi")),
			conditions: map[string]string{TypeOperatorGroupCompliant: "False/OperatorGroupMismatch"},
			messages:   []string{"the OperatorGroup found on the cluster does not match the policy (targetNamespaces), "},
		},
		{
			name: "inform: the named OperatorGroup has other targets", policy: story5Inform, want: policyv1.NonCompliant,
			observed:   with(story5Inform, operatorGroupObj(appNS, "og-strimzi", "x")),
			conditions: map[string]string{TypeOperatorGroupCompliant: "False/OperatorGroupMismatch"},
			messages: []string{"the OperatorGroup found on the cluster does not match the policy (targetNamespaces) " +
				"and is not updated because the policy is not enforced"},
		},
		{
			name: "the named OperatorGroup has another upgradeStrategy and staticProvidedAPIs", policy: story5OLMFields, want: policyv1.NonCompliant,
			observed:   with(story5OLMFields, operatorGroupObj(appNS, "og-strimzi", appNS)),
			conditions: map[string]string{TypeOperatorGroupCompliant: "False/OperatorGroupMismatch"},
			messages:   []string{"the OperatorGroup found on the cluster does not match the policy (upgradeStrategy, staticProvidedAPIs), "},
		},
		{
			name: "the named OperatorGroup has the upgradeStrategy and staticProvidedAPIs", policy: story5OLMFields, want: policyv1.Compliant,
			observed:   with(story5OLMFields, withOLMFields(operatorGroupObj(appNS, "og-strimzi", appNS))),
			conditions: map[string]string{TypeOperatorGroupCompliant: "True/OperatorGroupMatches"},
		},
		{
			name: "another OperatorGroup is in the way", policy: story5, want: policyv1.NonCompliant,
			observed:   with(story5, operatorGroupObj(appNS, "global")),
			conditions: map[string]string{TypeOperatorGroupCompliant: "False/OperatorGroupMismatch"},
			messages:   []string{"namespace strimzi-app-one already has OperatorGroup global; creating og-strimzi would make two"},
		},
		{
			name: "no OperatorGroup and AllNamespaces unsupported by the CSV", policy: story1, want: policyv1.NonCompliant,
			observed:   noAllNamespaces,
			conditions: map[string]string{TypeOperatorGroupCompliant: "False/AllNamespacesUnsupported"},
			messages:   []string{"the operator does not support the AllNamespaces install mode"},
		},
	})
}

func TestEvaluateSubscription(t *testing.T) {
	story1 := normalized(t, 1, nil)
	story1Inform := normalized(t, 1, func(s *v1beta1.OperatorPolicySpec) { s.RemediationAction = "inform" })
	edited := func(p Policy, edit func(*operatorsv1alpha1.Subscription)) Observed {
		obs := healthyInstall(t, p, csv350)
		edit(&obs.Subscriptions[0])
		return obs
	}
	resolution := func(reason, message string) func(*operatorsv1alpha1.Subscription) {
		return func(s *operatorsv1alpha1.Subscription) {
			s.Status.Conditions = append(s.Status.Conditions, subscriptionCondition(operatorsv1alpha1.SubscriptionResolutionFailed, reason, message))
		}
	}
	runEvaluateCases(t, []evaluateCase{
		{
			name: "channel and approval differ", policy: story1, want: policyv1.NonCompliant,
			observed: edited(story1, func(s *operatorsv1alpha1.Subscription) {
				s.Spec.Channel, s.Spec.InstallPlanApproval = "fast", ""
			}),
			conditions: map[string]string{TypeSubscriptionCompliant: "False/SubscriptionMismatch"},
			related:    map[string]string{"Subscription openshift-operators/" + strimzi: "NonCompliant: Resource found but does not match"},
			messages:   []string{"the Subscription found on the cluster does not match the policy (channel, installPlanApproval)"},
		},
		{
			name: "inform ignores installPlanApproval", policy: story1Inform, want: policyv1.Compliant,
			observed: edited(story1Inform, func(s *operatorsv1alpha1.Subscription) {
				s.Spec.InstallPlanApproval = operatorsv1alpha1.ApprovalAutomatic
			}),
			conditions: map[string]string{TypeSubscriptionCompliant: "True/SubscriptionMatches"},
		},
		{
			name: "inform reports a mismatch as not updated", policy: story1Inform, want: policyv1.NonCompliant,
			observed:   edited(story1Inform, func(s *operatorsv1alpha1.Subscription) { s.Spec.CatalogSource = "other" }),
			conditions: map[string]string{TypeSubscriptionCompliant: "False/SubscriptionMismatch"},
			messages:   []string{"does not match the policy (source) and is not updated because the policy is not enforced"},
		},
		{
			name: "config differs", policy: normalized(t, 1, func(s *v1beta1.OperatorPolicySpec) {
				s.Subscription.Config = &runtime.RawExtension{Raw: []byte(`{"env":[{"name":"A","value":"1"}]}`)}
			}), want: policyv1.NonCompliant,
			observed:   healthyInstall(t, story1, csv350),
			conditions: map[string]string{TypeSubscriptionCompliant: "False/SubscriptionMismatch"},
			messages:   []string{"(config)"},
		},
		{
			name: "unsatisfiable constraints naming the package", policy: story1, want: policyv1.NonCompliant,
			observed: edited(story1, resolution(reasonConstraintsNotSatisfiable,
				"constraints not satisfiable: subscription strimzi-kafka-operator requires ...")),
			conditions: map[string]string{TypeSubscriptionCompliant: "False/ConstraintsNotSatisfiable"},
			messages:   []string{"constraints not satisfiable: refer to the Subscription for more details"},
		},
		{
			name: "unsatisfiable constraints of another operator", policy: story1, want: policyv1.Compliant,
			observed:   edited(story1, resolution(reasonConstraintsNotSatisfiable, "constraints not satisfiable: subscription etcd requires ...")),
			conditions: map[string]string{TypeSubscriptionCompliant: "True/SubscriptionMatches"},
		},
		{
			name: "other resolution failure", policy: story1, want: policyv1.NonCompliant,
			observed:   edited(story1, resolution("ErrorPreventedResolution", "failed to list bundles")),
			conditions: map[string]string{TypeSubscriptionCompliant: "False/ErrorPreventedResolution"},
			messages:   []string{"failed to list bundles"},
		},
		{
			name: "Subscription conditions are copied and informative", policy: story1, want: policyv1.Compliant,
			observed: edited(story1, func(s *operatorsv1alpha1.Subscription) {
				s.Status.Conditions = append(s.Status.Conditions,
					subscriptionCondition(operatorsv1alpha1.SubscriptionInstallPlanPending, "RequiresApproval", ""),
					operatorsv1alpha1.SubscriptionCondition{Type: operatorsv1alpha1.SubscriptionInstallPlanFailed, Status: corev1.ConditionFalse},
					subscriptionCondition(operatorsv1alpha1.SubscriptionBundleUnpacking, "not a reason!", "unpacking the bundle"))
			}),
			conditions: map[string]string{
				"InstallPlanPending": "True/RequiresApproval",
				"InstallPlanFailed":  "False/InstallPlanFailed",
				"BundleUnpacking":    "True/BundleUnpacking",
				"ResolutionFailed":   "",
			},
			messages: []string{", unpacking the bundle"},
		},
	})
}

func TestEvaluateInstallPlan(t *testing.T) {
	story1 := normalized(t, 1, nil)
	story2 := normalized(t, 2, nil)
	story4 := normalized(t, 4, nil)
	story4Tolerant := normalized(t, 4, func(s *v1beta1.OperatorPolicySpec) { s.StatusConfig.UpgradesProgressing = "Condition" })
	withPlan := func(p Policy, installed, current string, plans ...operatorsv1alpha1.InstallPlan) Observed {
		obs := healthyInstall(t, p, csv350)
		obs.Subscriptions[0].Status.InstalledCSV, obs.Subscriptions[0].Status.CurrentCSV = installed, current
		obs.InstallPlans = plans
		return obs
	}
	installing := installPlanObj(opsNS, "install-2", 2, operatorsv1alpha1.InstallPlanPhaseInstalling, true, csv351)
	pending351 := installPlanObj(opsNS, "install-2", 2, requiresApproval, false, csv351)
	pending350 := installPlanObj(opsNS, "install-1", 1, requiresApproval, false, csv350)
	complete350 := installPlanObj(opsNS, "install-1", 1, operatorsv1alpha1.InstallPlanPhaseComplete, true, csv350)
	runEvaluateCases(t, []evaluateCase{
		{
			name: "installing counts by default (story 4 asks for it)", policy: story4, want: policyv1.NonCompliant,
			observed:   withPlan(story4, csv350, csv351, complete350, installing),
			conditions: map[string]string{TypeInstallPlanCompliant: "False/InstallPlansInstalling"},
			related:    map[string]string{"InstallPlan openshift-operators/install-2": "NonCompliant: The InstallPlan is Installing"},
			messages:   []string{"the InstallPlan for " + csv351 + " is installing"},
		},
		{
			name: "installing tolerated with upgradesProgressing Condition", policy: story4Tolerant, want: policyv1.Compliant,
			observed:   withPlan(story4Tolerant, csv350, csv351, installing),
			conditions: map[string]string{TypeInstallPlanCompliant: "True/InstallPlansInstalling"},
			messages:   []string{"the InstallPlan for " + csv351 + " is installing but not causing noncompliance"},
		},
		{
			name: "failed", policy: story1, want: policyv1.NonCompliant,
			observed:   withPlan(story1, "", csv350, installPlanObj(opsNS, "install-1", 1, operatorsv1alpha1.InstallPlanPhaseFailed, true, csv350)),
			conditions: map[string]string{TypeInstallPlanCompliant: "False/InstallPlanFailed"},
		},
		{
			name: "first install not allowed by the policy", policy: story1, want: policyv1.NonCompliant,
			observed:   withPlan(story1, "", csv351, pending351),
			conditions: map[string]string{TypeInstallPlanCompliant: "False/InstallPlanRequiresApproval"},
			related:    map[string]string{"InstallPlan openshift-operators/install-2": "NonCompliant: InstallPlan not approved"},
			messages:   []string{"the InstallPlan to install " + csv351 + " requires approval, but the policy does not allow " + csv351},
		},
		{
			name: "first install, inform", policy: story4, want: policyv1.NonCompliant,
			observed:   withPlan(story4, "", csv350, pending350),
			conditions: map[string]string{TypeInstallPlanCompliant: "False/InstallPlanRequiresApproval"},
			messages:   []string{"requires approval and is not approved because the policy is not enforced"},
		},
		{
			name: "approved, not yet installing", policy: story2, want: policyv1.Compliant,
			observed: withPlan(story2, csv350, csv351, complete350,
				installPlanObj(opsNS, "install-2", 2, requiresApproval, true, csv351)),
			conditions: map[string]string{TypeInstallPlanCompliant: "True/InstallPlanApproved"},
			messages:   []string{"the InstallPlan for " + csv351 + " was approved"},
		},
		{
			name: "stale plan for the installed CSV", policy: story1, want: policyv1.Compliant,
			observed:   withPlan(story1, csv350, csv350, pending350),
			conditions: map[string]string{TypeInstallPlanCompliant: "True/NoInstallPlansRequiringApproval"},
		},
		{
			name: "a complete plan for the current CSV wins over a newer one", policy: story1, want: policyv1.Compliant,
			observed: withPlan(story1, csv350, csv350, complete350,
				installPlanObj(opsNS, "install-3", 3, operatorsv1alpha1.InstallPlanPhaseFailed, false, csv350)),
			conditions: map[string]string{TypeInstallPlanCompliant: "True/NoInstallPlansRequiringApproval"},
			related:    map[string]string{"InstallPlan openshift-operators/install-1": "Compliant: The InstallPlan is Complete"},
		},
		{
			name: "plans of other namespaces and CSVs are not relevant", policy: story1, want: policyv1.Compliant,
			observed: withPlan(story1, csv350, csv350, installPlanObj(appNS, "x", 9, operatorsv1alpha1.InstallPlanPhaseFailed, false, csv350),
				installPlanObj(opsNS, "y", 9, operatorsv1alpha1.InstallPlanPhaseFailed, false, etcd094)),
			conditions: map[string]string{TypeInstallPlanCompliant: "True/NoInstallPlansFound"},
		},
	})
}

func TestEvaluateClusterServiceVersionAndDeployments(t *testing.T) {
	story1 := normalized(t, 1, nil)
	edited := func(edit func(*Observed)) Observed {
		obs := healthyInstall(t, story1, csv350)
		edit(&obs)
		return obs
	}
	runEvaluateCases(t, []evaluateCase{
		{
			name: "CSV missing", policy: story1, want: policyv1.NonCompliant,
			observed:   edited(func(o *Observed) { o.ClusterServiceVersions = nil }),
			conditions: map[string]string{TypeClusterServiceVersionCompliant: "False/ClusterServiceVersionMissing", TypeDeploymentCompliant: "True/NoRelevantDeployments"},
			related:    map[string]string{"ClusterServiceVersion openshift-operators/" + csv350: "NonCompliant: Resource not found but should exist"},
		},
		{
			name: "a copied CSV is not the operator's", policy: story1, want: policyv1.NonCompliant,
			observed: edited(func(o *Observed) {
				o.ClusterServiceVersions[0].Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: "elsewhere"}
			}),
			conditions: map[string]string{TypeClusterServiceVersionCompliant: "False/ClusterServiceVersionMissing"},
		},
		{
			name: "installed CSV not allowed", policy: normalized(t, 1, func(s *v1beta1.OperatorPolicySpec) { s.AllowedCSVs = []string{csv351} }),
			want: policyv1.NonCompliant, observed: healthyInstall(t, story1, csv350),
			conditions: map[string]string{TypeClusterServiceVersionCompliant: "False/UnapprovedVersion"},
			messages:   []string{"ClusterServiceVersion (" + csv350 + ") is not an approved version"},
		},
		{
			name: "CSV installing", policy: story1, want: policyv1.NonCompliant,
			observed: edited(func(o *Observed) {
				o.ClusterServiceVersions[0].Status = operatorsv1alpha1.ClusterServiceVersionStatus{Phase: operatorsv1alpha1.CSVPhaseInstalling,
					Reason: operatorsv1alpha1.CSVReasonWaiting, Message: "installing: waiting for deployment strimzi-cluster-operator to become ready"}
			}),
			conditions: map[string]string{TypeClusterServiceVersionCompliant: "False/InstallWaiting"},
			related:    map[string]string{"ClusterServiceVersion openshift-operators/" + csv350: "NonCompliant: Resource found but its phase is Installing"},
			messages:   []string{"ClusterServiceVersion (" + csv350 + ") - installing: waiting for deployment"},
		},
		{
			name: "CSV without status", policy: story1, want: policyv1.NonCompliant,
			observed: edited(func(o *Observed) {
				o.ClusterServiceVersions[0].Status = operatorsv1alpha1.ClusterServiceVersionStatus{}
			}),
			conditions: map[string]string{TypeClusterServiceVersionCompliant: "False/ClusterServiceVersionNotSucceeded"},
			messages:   []string{"ClusterServiceVersion (" + csv350 + ") - phase unknown"},
		},
		{
			name: "deployment unavailable", policy: story1, want: policyv1.NonCompliant,
			observed:   edited(func(o *Observed) { o.Deployments[0].Status.UnavailableReplicas = 1 }),
			conditions: map[string]string{TypeDeploymentCompliant: "False/DeploymentsUnavailable"},
			related:    map[string]string{"Deployment openshift-operators/" + strimziDep: "NonCompliant: Deployment Unavailable"},
			messages:   []string{"the deployments strimzi-cluster-operator do not have their minimum availability"},
		},
		{
			name: "deployment reported not available", policy: story1, want: policyv1.NonCompliant,
			observed: edited(func(o *Observed) {
				o.Deployments[0].Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse}}
			}),
			conditions: map[string]string{TypeDeploymentCompliant: "False/DeploymentsUnavailable"},
		},
		{
			name: "deployment missing, another in another namespace", policy: story1, want: policyv1.NonCompliant,
			observed: edited(func(o *Observed) {
				o.ClusterServiceVersions[0].Spec.InstallStrategy.StrategySpec.DeploymentSpecs = append(
					o.ClusterServiceVersions[0].Spec.InstallStrategy.StrategySpec.DeploymentSpecs, operatorsv1alpha1.StrategyDeploymentSpec{Name: "webhook"})
				o.Deployments = append(o.Deployments, deploymentObj(appNS, "webhook", 0))
			}),
			conditions: map[string]string{TypeDeploymentCompliant: "False/DeploymentsUnavailable"},
			related:    map[string]string{"Deployment openshift-operators/webhook": "NonCompliant: Resource not found but should exist"},
			messages:   []string{"the deployments webhook do not have"},
		},
		{
			name: "deployment unavailable, tolerated", policy: normalized(t, 1, func(s *v1beta1.OperatorPolicySpec) {
				s.ComplianceConfig = &v1beta1.ComplianceConfig{DeploymentsUnavailable: "Compliant"}
			}), want: policyv1.Compliant,
			observed:   edited(func(o *Observed) { o.Deployments[0].Status.UnavailableReplicas = 1 }),
			conditions: map[string]string{TypeDeploymentCompliant: "True/DeploymentsUnavailable"},
			related:    map[string]string{"Deployment openshift-operators/" + strimziDep: "NonCompliant: Deployment Unavailable"},
			messages:   []string{"do not have their minimum availability but not causing noncompliance"},
		},
		{
			name: "deployment unavailable, message only", policy: normalized(t, 1, func(s *v1beta1.OperatorPolicySpec) {
				s.StatusConfig = &v1beta1.StatusConfig{DeploymentsUnavailable: "StatusMessageOnly"}
			}), want: policyv1.Compliant,
			observed:   edited(func(o *Observed) { o.Deployments[0].Status.UnavailableReplicas = 1 }),
			conditions: map[string]string{TypeDeploymentCompliant: ""},
			messages:   []string{"there are no relevant deprecations, the deployments strimzi-cluster-operator do not have their minimum availability but not causing noncompliance"},
		},
		{
			name: "CSV without deployments", policy: story1, want: policyv1.Compliant,
			observed:   edited(func(o *Observed) { o.ClusterServiceVersions[0].Spec.InstallStrategy.StrategySpec.DeploymentSpecs = nil }),
			conditions: map[string]string{TypeDeploymentCompliant: "True/NoExistingDeployments"},
		},
	})
}

func TestEvaluateCatalogSource(t *testing.T) {
	story1 := normalized(t, 1, nil)
	story4 := normalized(t, 4, nil) // catalogSourceUnhealthy: NonCompliant
	withCatalog := func(p Policy, cs *operatorsv1alpha1.CatalogSource) Observed {
		obs := healthyInstall(t, p, csv350)
		obs.CatalogSource = cs
		return obs
	}
	elsewhere := catalogObj("READY")
	elsewhere.Namespace = "olm"
	runEvaluateCases(t, []evaluateCase{
		{
			name: "unhealthy, default effect", policy: story1, want: policyv1.Compliant,
			observed:   withCatalog(story1, catalogObj("TRANSIENT_FAILURE")),
			conditions: map[string]string{TypeCatalogSourcesUnhealthy: "True/CatalogSourcesFoundUnhealthy"},
			related:    map[string]string{"CatalogSource openshift-marketplace/" + catalog: "NonCompliant: Resource found but its state is TRANSIENT_FAILURE"},
			messages:   []string{"CatalogSource 'community-operators' is unhealthy (state TRANSIENT_FAILURE) but not causing noncompliance"},
		},
		{
			name: "unhealthy, NonCompliant (story 4)", policy: story4, want: policyv1.NonCompliant,
			observed:   withCatalog(story4, catalogObj("CONNECTING")),
			conditions: map[string]string{TypeCatalogSourcesUnhealthy: "True/CatalogSourcesFoundUnhealthy"},
		},
		{
			name: "state unknown", policy: story4, want: policyv1.NonCompliant,
			observed:   withCatalog(story4, catalogObj("")),
			conditions: map[string]string{TypeCatalogSourcesUnhealthy: "True/CatalogSourcesUnknownState"},
			related:    map[string]string{"CatalogSource openshift-marketplace/" + catalog: "NonCompliant: Resource found but current state is unknown"},
		},
		{
			name: "a CatalogSource of another namespace is not the source", policy: story4, want: policyv1.NonCompliant,
			observed:   withCatalog(story4, elsewhere),
			conditions: map[string]string{TypeCatalogSourcesUnhealthy: "True/CatalogSourcesNotFound"},
		},
		{
			name: "healthy (story 4)", policy: story4, want: policyv1.Compliant,
			observed:   withCatalog(story4, catalogObj("READY")),
			conditions: map[string]string{TypeCatalogSourcesUnhealthy: "False/CatalogSourcesFound"},
		},
		{
			name: "source taken from the Subscription when the policy names none",
			policy: normalized(t, 4, func(s *v1beta1.OperatorPolicySpec) {
				s.Subscription.Source, s.Subscription.SourceNamespace = "", ""
			}), want: policyv1.NonCompliant,
			observed:   withCatalog(story4, nil),
			conditions: map[string]string{TypeCatalogSourcesUnhealthy: "True/CatalogSourcesNotFound"},
			related:    map[string]string{"CatalogSource openshift-marketplace/" + catalog: "NonCompliant: Resource not found but should exist"},
		},
	})
}

func TestEvaluateDeprecationsAndMinorChannels(t *testing.T) {
	// The policies leave the channel to the Subscription.
	story5 := normalized(t, 5, func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Channel = "" })
	strict := normalized(t, 5, func(s *v1beta1.OperatorPolicySpec) {
		s.Subscription.Channel = ""
		s.ComplianceConfig = &v1beta1.ComplianceConfig{DeprecationsPresent: "NonCompliant", MinorChannelUpgradeAvailable: "NonCompliant"}
	})
	manual := normalized(t, 5, func(s *v1beta1.OperatorPolicySpec) {
		s.Subscription.Channel, s.Subscription.InstallPlanApproval = "", "Manual"
	})
	deprecated := func(p Policy, conds ...operatorsv1alpha1.SubscriptionCondition) Observed {
		obs := healthyInstall(t, p, csv350)
		obs.Subscriptions[0].Status.Conditions = conds
		return obs
	}
	channels := func(p Policy, channel string, available ...string) Observed {
		obs := healthyInstall(t, p, csv350)
		obs.Subscriptions[0].Spec.Channel = channel
		obs.Channels = available
		return obs
	}
	lines := []string{"stable-1.2", "stable-1.10", "stable-2.0", "fast-1.9", "stable-1.11.x", "stable"}
	runEvaluateCases(t, []evaluateCase{
		{
			name: "channel deprecated, default effect", policy: story5, want: policyv1.Compliant,
			observed: deprecated(story5, subscriptionCondition(operatorsv1alpha1.SubscriptionChannelDeprecated, "Deprecated", "channel stable is deprecated"),
				subscriptionCondition(operatorsv1alpha1.SubscriptionDeprecated, "Deprecated", "summary")),
			conditions: map[string]string{TypeNoDeprecations: "False/ChannelDeprecated"},
			messages:   []string{"channel stable is deprecated but not causing noncompliance"},
		},
		{
			name: "summary deprecation only, NonCompliant", policy: strict, want: policyv1.NonCompliant,
			observed:   deprecated(strict, subscriptionCondition(operatorsv1alpha1.SubscriptionDeprecated, "Deprecated", "")),
			conditions: map[string]string{TypeNoDeprecations: "False/Deprecated"},
			messages:   []string{"the Subscription has condition Deprecated"},
		},
		{
			name: "newer minor channel, default effect", policy: story5, want: policyv1.Compliant,
			observed:   channels(story5, "stable-1.2", lines...),
			conditions: map[string]string{TypeMinorChannelUpgradeAvailable: "True/MinorChannelUpgradeAvailable"},
			messages:   []string{"a newer minor channel stable-1.10 is available for the subscribed channel stable-1.2 but not causing noncompliance"},
		},
		{
			name: "newer minor channel, NonCompliant", policy: strict, want: policyv1.NonCompliant,
			observed:   channels(strict, "stable-1.11.x", append(lines, "stable-1.12.x")...),
			conditions: map[string]string{TypeMinorChannelUpgradeAvailable: "True/MinorChannelUpgradeAvailable"},
			messages:   []string{"stable-1.12.x is available"},
		},
		{
			name: "latest minor channel", policy: strict, want: policyv1.Compliant,
			observed:   channels(strict, "stable-1.10", lines...),
			conditions: map[string]string{TypeMinorChannelUpgradeAvailable: "False/LatestMinorChannel"},
		},
		{
			name: "channel without a minor version", policy: strict, want: policyv1.Compliant,
			observed:   channels(strict, "stable", lines...),
			conditions: map[string]string{TypeMinorChannelUpgradeAvailable: ""},
		},
		{
			name: "Manual approval never looks at channels", policy: manual, want: policyv1.Compliant,
			observed:   channels(manual, "stable-1.2", lines...),
			conditions: map[string]string{TypeMinorChannelUpgradeAvailable: ""},
		},
		{
			name: "channels unknown", policy: strict, want: policyv1.Compliant,
			observed:   channels(strict, "stable-1.2"),
			conditions: map[string]string{TypeMinorChannelUpgradeAvailable: ""},
		},
	})
}

func TestParseMinorChannel(t *testing.T) {
	tests := []struct {
		name         string
		ok           bool
		prefix       string
		major, minor int
		suffix       string
	}{
		{"stable-1.2", true, "stable-", 1, 2, ""},
		{"release-4.16.x", true, "release-", 4, 16, ".x"},
		{"1.2", true, "", 1, 2, ""},
		{"stable", false, "", 0, 0, ""},
		{"stable-1", false, "", 0, 0, ""},
		{"stable-1.2.3", false, "", 0, 0, ""},
		{"v1_2.3", false, "", 0, 0, ""},
		{"stable-1.", false, "", 0, 0, ""},
		{"stable-1.2345678901", false, "", 0, 0, ""},
	}
	for _, tc := range tests {
		c, ok := parseMinorChannel(tc.name)
		if ok != tc.ok || (ok && (c.prefix != tc.prefix || c.major != tc.major || c.minor != tc.minor || c.suffix != tc.suffix)) {
			t.Errorf("parseMinorChannel(%q) = %+v, %t", tc.name, c, ok)
		}
	}
}

// TestEvaluateTransitions follows one policy through three evaluations
// (healthy, a Deployment unavailable, healthy again): the Deployments changed
// last, so the Compliant condition carries their reason.
func TestEvaluateTransitions(t *testing.T) {
	p := normalized(t, 1, nil)
	healthy := healthyInstall(t, p, csv350)
	broken := healthyInstall(t, p, csv350)
	broken.Deployments[0].Status.UnavailableReplicas = 1
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)

	first := Evaluate(p, healthy, nil, t0)
	if c := conditionOf(t, first, TypeCompliant); c.Reason != "PolicyValidated" || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("first Compliant condition %+v", c)
	}

	second := Evaluate(p, broken, first.Conditions, t1)
	wantSecond := "NonCompliant; the deployments strimzi-cluster-operator do not have their minimum availability, the policy spec is valid, "
	if !strings.HasPrefix(second.EventMessage, wantSecond) {
		t.Errorf("second event %q must start with %q", second.EventMessage, wantSecond)
	}
	if c := conditionOf(t, second, TypeCompliant); c.Status != metav1.ConditionFalse || c.Reason != "DeploymentsUnavailable" || !c.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("second Compliant condition %+v", c)
	}
	if c := conditionOf(t, second, TypeValidPolicySpec); !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("an unchanged condition moved to %v", c.LastTransitionTime)
	}

	third := Evaluate(p, healthy, second.Conditions, t2)
	wantThird := "Compliant; all operator Deployments have their minimum availability, the policy spec is valid, the OperatorGroup matches"
	if !strings.HasPrefix(third.EventMessage, wantThird) {
		t.Errorf("third event %q must start with %q", third.EventMessage, wantThird)
	}
	if c := conditionOf(t, third, TypeCompliant); c.Reason != "DeploymentsAvailable" || c.Message != "all operator Deployments have their minimum availability" ||
		!c.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("third Compliant condition %+v", c)
	}
	// A message change without a status change keeps the transition time.
	fourth := Evaluate(p, healthy, third.Conditions, t2.Add(time.Hour))
	if c := conditionOf(t, fourth, TypeDeploymentCompliant); !c.LastTransitionTime.Time.Equal(t2) {
		t.Errorf("an unchanged status moved to %v", c.LastTransitionTime)
	}
}

func TestEvaluateInvalid(t *testing.T) {
	tests := []struct {
		name string
		edit func(*v1beta1.OperatorPolicySpec)
		want string
	}{
		{"subscription name missing", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Name = "" },
			"NonCompliant; OperatorPolicy local-cluster/strimzi-policy: spec.subscription.name: Required value"},
		// As OCM's controller reports a spec.subscription.installPlanApproval
		// ("installPlanApproval is prohibited in spec.subscription"): the
		// policy is admitted and NonCompliant with ValidPolicySpec False.
		{"approval spellings disagree", func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.InstallPlanApproval, s.UpgradeApproval = "Automatic", "None"
		}, `NonCompliant; OperatorPolicy local-cluster/strimzi-policy: spec.subscription.installPlanApproval: Invalid value: "Automatic": disagrees with spec.upgradeApproval ("None"); Manual pairs with None`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := story(t, 1)
			tc.edit(&op.Spec)
			_, err := Normalize(op)
			if err == nil {
				t.Fatal("expected an invalid policy")
			}
			ev := EvaluateInvalid(err, nil, t0)
			if ev.Compliance != policyv1.NonCompliant || ev.EventMessage != tc.want {
				t.Errorf("got %s %q, want %q", ev.Compliance, ev.EventMessage, tc.want)
			}
			got := conditionsOf(ev)
			if len(got) != 2 || got[TypeCompliant] != "False/InvalidPolicySpec" || got[TypeValidPolicySpec] != "False/InvalidPolicySpec" {
				t.Errorf("conditions %v", got)
			}
		})
	}
	if ev := EvaluateInvalid(errors.New(""), nil, t0); ev.Compliance != policyv1.NonCompliant {
		t.Errorf("an empty error gave %s", ev.Compliance)
	}
}

func TestConditionReason(t *testing.T) {
	for reason, want := range map[string]string{
		"InstallSucceeded": "InstallSucceeded", "A": "A", "a_b,c:d": "a_b,c:d",
		"": "F", "1abc": "F", "has space": "F", "ends:": "F", "ends,": "F", "Ünicode": "F", strings.Repeat("a", 1025): "F",
	} {
		if got := conditionReason(reason, "F"); got != want {
			t.Errorf("conditionReason(%q) = %q, want %q", reason, got, want)
		}
	}
}
