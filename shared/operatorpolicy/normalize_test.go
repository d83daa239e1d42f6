package operatorpolicy

import (
	"reflect"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

func TestNormalizeStories(t *testing.T) {
	stimziSub := func(ns, startingCSV string) Subscription {
		return Subscription{Package: strimzi, Namespace: ns, Channel: "stable", Source: catalog, SourceNamespace: catalogNS, StartingCSV: startingCSV}
	}
	base := func() Policy {
		return Policy{Namespace: "local-cluster", Name: "strimzi-policy", OnDeletion: RemoveOnUserDeletion, Effects: defaultEffects, Removal: Removal{
			OperatorGroups: v1beta1.RemovalDeleteIfUnused, Subscriptions: v1beta1.RemovalDelete, ClusterServiceVersions: v1beta1.RemovalDelete,
			InstallPlans: v1beta1.RemovalKeep, CustomResourceDefinitions: v1beta1.RemovalKeep, APIServiceDefinitions: v1beta1.RemovalKeep,
		}}
	}
	story1 := base()
	story1.Enforce = true
	story1.Subscription = stimziSub(opsNS, csv350)
	story1.Allowed = AllowedCSVs{Names: []string{csv350}}
	story1.Approval = operatorsv1alpha1.ApprovalManual

	story2 := story1
	story2.Allowed = AllowedCSVs{Names: []string{csv350, csv351}}

	story3 := story1
	story3.Effects.UpgradesAvailable = EffectNonCompliant

	story4 := base()
	story4.Subscription = stimziSub(opsNS, "")
	story4.Allowed = AllowedCSVs{All: true}
	story4.Approval = operatorsv1alpha1.ApprovalAutomatic
	story4.Effects.CatalogSourceUnhealthy = EffectNonCompliant

	story5 := base()
	story5.Enforce = true
	story5.Subscription = stimziSub(appNS, "")
	story5.Allowed = AllowedCSVs{All: true}
	story5.Approval = operatorsv1alpha1.ApprovalAutomatic
	story5.OperatorGroup = &OperatorGroup{Name: "og-strimzi", Namespace: appNS, TargetNamespaces: []string{appNS}}

	story6 := story5
	story6.OperatorGroup = nil

	for n, want := range map[int]Policy{1: story1, 2: story2, 3: story3, 4: story4, 5: story5, 6: story6} {
		got, err := Normalize(story(t, n))
		if err != nil {
			t.Fatalf("story %d: %v", n, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("story %d:\n got %+v\nwant %+v", n, got, want)
		}
	}
}

// TestNormalizeSpellings checks each fleetpolicy/OCM pair, from story 1
// (fleetpolicy's spelling) with fleetpolicy's field cleared where OCM's is tested.
func TestNormalizeSpellings(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	tests := []struct {
		name string
		edit func(*v1beta1.OperatorPolicy)
		got  func(Policy) any
		want any
	}{
		// allowedCSVs vs versions
		{"versions split at commas, blanks ignored", func(op *v1beta1.OperatorPolicy) {
			op.Spec.AllowedCSVs = nil
			op.Spec.Versions = []string{"b.v1, a.v1", " ", "c.v1,,", "a.v1"}
		}, allowed, AllowedCSVs{Names: []string{"a.v1", "b.v1", "c.v1"}}},
		{"versions empty allow all", func(op *v1beta1.OperatorPolicy) { op.Spec.AllowedCSVs = nil }, allowed, AllowedCSVs{All: true}},
		{"versions only blanks allow all", func(op *v1beta1.OperatorPolicy) {
			op.Spec.AllowedCSVs, op.Spec.Versions = nil, []string{" , ", ""}
		}, allowed, AllowedCSVs{All: true}},
		{"versions star allows all", func(op *v1beta1.OperatorPolicy) {
			op.Spec.AllowedCSVs, op.Spec.Versions = nil, []string{"a.v1,*"}
		}, allowed, AllowedCSVs{All: true}},
		{"allowedCSVs star allows all", func(op *v1beta1.OperatorPolicy) { op.Spec.AllowedCSVs = []string{"*"} }, allowed, AllowedCSVs{All: true}},
		{"allowedCSVs sorted and unique", func(op *v1beta1.OperatorPolicy) { op.Spec.AllowedCSVs = []string{"b", " a ", "b"} },
			allowed, AllowedCSVs{Names: []string{"a", "b"}}},
		{"both spellings agreeing", func(op *v1beta1.OperatorPolicy) {
			op.Spec.AllowedCSVs, op.Spec.Versions = []string{"b", "a"}, []string{"a,b"}
		}, allowed, AllowedCSVs{Names: []string{"a", "b"}}},

		// installPlanApproval vs upgradeApproval
		{"upgradeApproval None is Manual", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.InstallPlanApproval, op.Spec.UpgradeApproval = "", "None"
		}, approval, operatorsv1alpha1.ApprovalManual},
		{"upgradeApproval Automatic", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.InstallPlanApproval, op.Spec.UpgradeApproval = "", "Automatic"
		}, approval, operatorsv1alpha1.ApprovalAutomatic},
		{"Manual agrees with None", func(op *v1beta1.OperatorPolicy) { op.Spec.UpgradeApproval = "none" }, approval, operatorsv1alpha1.ApprovalManual},
		{"installPlanApproval in any case", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.InstallPlanApproval = "automatic" },
			approval, operatorsv1alpha1.ApprovalAutomatic},
		{"approval defaults to Automatic", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.InstallPlanApproval = "" },
			approval, operatorsv1alpha1.ApprovalAutomatic},

		// statusConfig vs complianceConfig
		{"complianceConfig Compliant is Condition", func(op *v1beta1.OperatorPolicy) {
			op.Spec.ComplianceConfig = &v1beta1.ComplianceConfig{DeploymentsUnavailable: "Compliant", CatalogSourceUnhealthy: "NonCompliant",
				DeprecationsPresent: "NonCompliant", MinorChannelUpgradeAvailable: "noncompliant"}
		}, effects, Effects{CatalogSourceUnhealthy: EffectNonCompliant, DeploymentsUnavailable: EffectCondition, UpgradesAvailable: EffectCondition,
			UpgradesProgressing: EffectNonCompliant, DeprecationsPresent: EffectNonCompliant, MinorChannelUpgradeAvailable: EffectNonCompliant}},
		{"statusConfig values", func(op *v1beta1.OperatorPolicy) {
			op.Spec.StatusConfig = &v1beta1.StatusConfig{CatalogSourceUnhealthy: "StatusMessageOnly", DeploymentsUnavailable: "Condition",
				UpgradesAvailable: "NonCompliant", UpgradesProgressing: "condition"}
		}, effects, Effects{CatalogSourceUnhealthy: EffectMessageOnly, DeploymentsUnavailable: EffectCondition, UpgradesAvailable: EffectNonCompliant,
			UpgradesProgressing: EffectCondition, DeprecationsPresent: EffectCondition, MinorChannelUpgradeAvailable: EffectCondition}},
		{"both spellings agreeing keep fleetpolicy's value", func(op *v1beta1.OperatorPolicy) {
			op.Spec.StatusConfig = &v1beta1.StatusConfig{CatalogSourceUnhealthy: "StatusMessageOnly", DeploymentsUnavailable: "NonCompliant"}
			op.Spec.ComplianceConfig = &v1beta1.ComplianceConfig{CatalogSourceUnhealthy: "Compliant", DeploymentsUnavailable: "NonCompliant"}
		}, func(p Policy) any {
			return []Effect{p.Effects.CatalogSourceUnhealthy, p.Effects.DeploymentsUnavailable}
		},
			[]Effect{EffectMessageOnly, EffectNonCompliant}},
		{"OCM defaults", func(op *v1beta1.OperatorPolicy) {}, effects, Effects{
			CatalogSourceUnhealthy: EffectCondition, DeploymentsUnavailable: EffectNonCompliant, UpgradesAvailable: EffectCondition,
			UpgradesProgressing: EffectNonCompliant, DeprecationsPresent: EffectCondition, MinorChannelUpgradeAvailable: EffectCondition}},

		// removal on deletion vs mustnothave
		{"musthave keeps", func(op *v1beta1.OperatorPolicy) { op.Spec.ComplianceType = "MustHave" }, remove, false},
		{"mustnothave removes", func(op *v1beta1.OperatorPolicy) { op.Spec.ComplianceType = "mustnothave" }, remove, true},
		{"OLM's OperatorGroup upgradeStrategy and staticProvidedAPIs are used", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Extra: map[string]runtime.RawExtension{
				"upgradeStrategy": {Raw: []byte(`"TechPreviewUnsafeFailForward"`)}, "staticProvidedAPIs": {Raw: []byte(`false`)},
			}}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS, UpgradeStrategy: "TechPreviewUnsafeFailForward", StaticProvidedAPIs: ptr.To(false)}},
		{"fleetpolicy spelling: removal on a user's deletion", func(op *v1beta1.OperatorPolicy) {}, onDeletion, RemoveOnUserDeletion},
		{"OCM spelling: no removal on deletion", ocmSpelling, onDeletion, RemoveNever},
		{"fleetpolicy spelling, annotation Never", annotated("never", nil), onDeletion, RemoveNever},
		{"fleetpolicy spelling, annotation Always", annotated("Always", nil), onDeletion, RemoveAlways},
		{"OCM spelling, annotation UserDeletion", annotated("UserDeletion", ocmSpelling), onDeletion, RemoveOnUserDeletion},
		{"OCM spelling, annotation Always", annotated("ALWAYS", ocmSpelling), onDeletion, RemoveAlways},
		{"deletion alone does not remove (RemovesOnDeletion decides)", func(op *v1beta1.OperatorPolicy) { op.DeletionTimestamp = &metav1.Time{Time: t0} }, remove, false},

		// removalBehavior
		{"removalBehavior in any case, others defaulted", func(op *v1beta1.OperatorPolicy) {
			op.Spec.RemovalBehavior = v1beta1.RemovalBehavior{OperatorGroups: "keep", CustomResourceDefinitions: "DELETE"}
		}, func(p Policy) any { return p.Removal }, Removal{
			OperatorGroups: v1beta1.RemovalKeep, Subscriptions: v1beta1.RemovalDelete, ClusterServiceVersions: v1beta1.RemovalDelete,
			InstallPlans: v1beta1.RemovalKeep, CustomResourceDefinitions: v1beta1.RemovalDelete, APIServiceDefinitions: v1beta1.RemovalKeep}},

		// remediationAction
		{"Enforce in any case", func(op *v1beta1.OperatorPolicy) { op.Spec.RemediationAction = "Enforce" }, enforce, true},
		{"unset remediationAction informs", func(op *v1beta1.OperatorPolicy) { op.Spec.RemediationAction = "" }, enforce, false},

		// operatorGroup target vs targetNamespaces/selector
		{"target.namespaces", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Target: &v1beta1.OperatorGroupTarget{Namespaces: []string{"b", "a", "b"}}}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS, TargetNamespaces: []string{"a", "b"}}},
		{"targetNamespaces", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Namespace: opsNS, TargetNamespaces: raw([]string{"a"}), ServiceAccountName: "sa"}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS, TargetNamespaces: []string{"a"}, ServiceAccountName: "sa"}},
		{"both namespace spellings agreeing", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Target: &v1beta1.OperatorGroupTarget{Namespaces: []string{"b", "a"}},
				TargetNamespaces: raw([]string{"a", "b"})}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS, TargetNamespaces: []string{"a", "b"}}},
		{"target.selector", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Target: &v1beta1.OperatorGroupTarget{Selector: selector}}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS, Selector: selector}},
		{"selector", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Selector: raw(selector)}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS, Selector: selector}},
		{"no targets is AllNamespaces", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og"}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: opsNS}},

		// subscription namespace
		{"subscription namespace stays unset for the cluster to default (not the policy's)", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.Namespace = "" },
			func(p Policy) any { return p.Subscription.Namespace }, ""},
		{"operatorGroup namespace kept while the subscription's is unset", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.Namespace = ""
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Namespace: "elsewhere"}
		}, operatorGroup, &OperatorGroup{Name: "og", Namespace: "elsewhere"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := story(t, 1)
			tc.edit(op)
			p, err := Normalize(op)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.got(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func allowed(p Policy) any    { return p.Allowed }
func approval(p Policy) any   { return p.Approval }
func effects(p Policy) any    { return p.Effects }
func remove(p Policy) any     { return p.Remove }
func onDeletion(p Policy) any { return p.OnDeletion }

// ocmSpelling turns story 1's allowedCSVs into OCM's versions.
func ocmSpelling(op *v1beta1.OperatorPolicy) {
	op.Spec.AllowedCSVs, op.Spec.Versions = nil, []string{"strimzi-cluster-operator.v0.35.0"}
}

// annotated sets the remove-on-deletion annotation after spelling (when not nil).
func annotated(value string, spelling func(*v1beta1.OperatorPolicy)) func(*v1beta1.OperatorPolicy) {
	return func(op *v1beta1.OperatorPolicy) {
		if spelling != nil {
			spelling(op)
		}
		op.Annotations = map[string]string{AnnotationOnDeletion: value}
	}
}
func enforce(p Policy) any       { return p.Enforce }
func operatorGroup(p Policy) any { return p.OperatorGroup }

func TestNormalizeErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*v1beta1.OperatorPolicy)
		// want lists, per expected field error in order, its field and a piece
		// of its body (field.Error.ErrorBody).
		want [][2]string
	}{
		{"subscription name missing", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.Name = "" },
			[][2]string{{"spec.subscription.name", "Required value"}}},
		{"subscription name invalid", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.Name = "Strimzi_Operator" },
			[][2]string{{"spec.subscription.name", `Invalid value: "Strimzi_Operator"`}}},
		{"subscription namespace invalid", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.Namespace = "Operators" },
			[][2]string{{"spec.subscription.namespace", `Invalid value: "Operators"`}}},
		{"empty allowedCSVs", func(op *v1beta1.OperatorPolicy) { op.Spec.AllowedCSVs = []string{} },
			[][2]string{{"spec.allowedCSVs", "must have at least one item"}}},
		{"blank allowedCSVs entry", func(op *v1beta1.OperatorPolicy) { op.Spec.AllowedCSVs = []string{"a", " "} },
			[][2]string{{"spec.allowedCSVs[1]", "must not be empty"}}},
		{"allowedCSVs and versions disagree", func(op *v1beta1.OperatorPolicy) { op.Spec.Versions = []string{csv350 + ",other.v1"} },
			[][2]string{{"spec.allowedCSVs", `Invalid value: "[` + csv350 + `]": disagrees with spec.versions ("[other.v1, ` + csv350 + `]")`}}},
		{"allowedCSVs star and versions disagree", func(op *v1beta1.OperatorPolicy) {
			op.Spec.AllowedCSVs, op.Spec.Versions = []string{"*"}, []string{csv350}
		}, [][2]string{{"spec.allowedCSVs", `Invalid value: "all": disagrees with spec.versions ("[` + csv350 + `]")`}}},
		// OCM's CRD admits any installPlanApproval and its controller reports
		// it as an invalid spec; ours admits a disagreeing one too (issue 29)
		// and this error is what the spoke reports (EvaluateInvalid).
		{"approval spellings disagree", func(op *v1beta1.OperatorPolicy) { op.Spec.UpgradeApproval = "Automatic" },
			[][2]string{{"spec.subscription.installPlanApproval", `Invalid value: "Manual": disagrees with spec.upgradeApproval ("Automatic"); Manual pairs with None`}}},
		{"approval spellings disagree (Automatic, None)", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.InstallPlanApproval, op.Spec.UpgradeApproval = "Automatic", "None"
		}, [][2]string{{"spec.subscription.installPlanApproval", `Invalid value: "Automatic": disagrees with spec.upgradeApproval ("None"); Manual pairs with None`}}},
		{"approval spellings disagree in any case", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.InstallPlanApproval, op.Spec.UpgradeApproval = "automatic", "NONE"
		}, [][2]string{{"spec.subscription.installPlanApproval", `Invalid value: "automatic": disagrees with spec.upgradeApproval ("NONE")`}}},
		{"unknown installPlanApproval", func(op *v1beta1.OperatorPolicy) { op.Spec.Subscription.InstallPlanApproval = "None" },
			[][2]string{{"spec.subscription.installPlanApproval", `Unsupported value: "None": supported values: "Automatic", "Manual"`}}},
		{"unknown upgradeApproval", func(op *v1beta1.OperatorPolicy) { op.Spec.UpgradeApproval = "Manual" },
			[][2]string{{"spec.upgradeApproval", `Unsupported value: "Manual": supported values: "Automatic", "None"`}}},
		{"effect spellings disagree", func(op *v1beta1.OperatorPolicy) {
			op.Spec.StatusConfig = &v1beta1.StatusConfig{UpgradesAvailable: "Condition"}
			op.Spec.ComplianceConfig = &v1beta1.ComplianceConfig{UpgradesAvailable: "NonCompliant"}
		}, [][2]string{{"spec.statusConfig.upgradesAvailable", `Invalid value: "Condition": disagrees with spec.complianceConfig.upgradesAvailable ("NonCompliant")`}}},
		{"unknown effects", func(op *v1beta1.OperatorPolicy) {
			op.Spec.StatusConfig = &v1beta1.StatusConfig{UpgradesProgressing: "Compliant"}
			op.Spec.ComplianceConfig = &v1beta1.ComplianceConfig{DeprecationsPresent: "Condition"}
		}, [][2]string{
			{"spec.statusConfig.upgradesProgressing", `Unsupported value: "Compliant": supported values: "StatusMessageOnly", "Condition", "NonCompliant"`},
			{"spec.complianceConfig.deprecationsPresent", `Unsupported value: "Condition": supported values: "Compliant", "NonCompliant"`},
		}},
		{"unknown removal actions", func(op *v1beta1.OperatorPolicy) {
			op.Spec.RemovalBehavior = v1beta1.RemovalBehavior{OperatorGroups: "Orphan", Subscriptions: "DeleteIfUnused"}
		}, [][2]string{
			{"spec.removalBehavior.operatorGroups", `Unsupported value: "Orphan": supported values: "Keep", "Delete", "DeleteIfUnused"`},
			{"spec.removalBehavior.subscriptions", `Unsupported value: "DeleteIfUnused": supported values: "Keep", "Delete"`},
		}},
		{"unresolved config template", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.Config = &runtime.RawExtension{Raw: []byte(`"{{ fromConfigMap \"a\" \"b\" \"c\" | toLiteral }}"`)}
		}, [][2]string{{"spec.subscription.config", `Invalid value: "{{ fromConfigMap \"a\" \"b\" \"c\" | toLiteral }}": holds an unresolved template, not a value`}}},
		{"config that is not a SubscriptionConfig", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.Config = &runtime.RawExtension{Raw: []byte(`{"env":"A=1"}`)}
		}, [][2]string{{"spec.subscription.config", "Invalid value: json: cannot unmarshal string"}}},
		{"unresolved operatorGroup templates", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", TargetNamespaces: raw("{{ .x }}"), Selector: raw("{{ .y }}")}
		}, [][2]string{
			{"spec.operatorGroup.targetNamespaces", `Invalid value: "{{ .x }}": holds an unresolved template`},
			{"spec.operatorGroup.selector", `Invalid value: "{{ .y }}": holds an unresolved template`},
		}},
		{"operatorGroup targets of the wrong shape", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", TargetNamespaces: raw(map[string]string{"a": "b"})}
		}, [][2]string{{"spec.operatorGroup.targetNamespaces", "Invalid value: json: cannot unmarshal object"}}},
		{"unknown remediationAction", func(op *v1beta1.OperatorPolicy) { op.Spec.RemediationAction = "audit" },
			[][2]string{{"spec.remediationAction", `Unsupported value: "audit": supported values: "inform", "enforce", "InformOnly"`}}},
		{"mustonlyhave", func(op *v1beta1.OperatorPolicy) { op.Spec.ComplianceType = "mustonlyhave" },
			[][2]string{{"spec.complianceType", `Unsupported value: "mustonlyhave": supported values: "musthave", "mustnothave"`}}},
		{"operatorGroup without name, in another namespace", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Namespace: "elsewhere"}
		}, [][2]string{
			{"spec.operatorGroup.name", "Required value: when spec.operatorGroup is set"},
			{"spec.operatorGroup.namespace", `Invalid value: "elsewhere": must be the subscription's namespace "openshift-operators"`},
		}},
		{"operatorGroup namespace spellings disagree", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Target: &v1beta1.OperatorGroupTarget{Namespaces: []string{"a"}},
				TargetNamespaces: raw([]string{"b"})}
		}, [][2]string{{"spec.operatorGroup.target.namespaces", `Invalid value: ["a"]: disagrees with spec.operatorGroup.targetNamespaces ([b])`}}},
		{"operatorGroup selector spellings disagree", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og",
				Target:   &v1beta1.OperatorGroupTarget{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}}},
				Selector: raw(&metav1.LabelSelector{MatchLabels: map[string]string{"a": "2"}})}
		}, [][2]string{{"spec.operatorGroup.target.selector", "Invalid value: disagrees with spec.operatorGroup.selector"}}},
		{"operatorGroup namespaces and selector", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", TargetNamespaces: raw([]string{"a"}), Selector: raw(&metav1.LabelSelector{})}
		}, [][2]string{{"spec.operatorGroup.selector", "Forbidden: may not be set with spec.operatorGroup.targetNamespaces"}}},
		{"operatorGroup bad entries", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Target: &v1beta1.OperatorGroupTarget{Namespaces: []string{"ok", ""},
				Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}}}}
		}, [][2]string{
			{"spec.operatorGroup.target.namespaces[1]", `Invalid value: ""`},
			{"spec.operatorGroup.target.selector", `Invalid value: "Near" is not a valid label selector operator`},
			{"spec.operatorGroup.target.selector", "Forbidden: may not be set with spec.operatorGroup.target.namespaces"},
		}},
		{"every problem is reported", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.Name = ""
			op.Spec.AllowedCSVs = []string{}
			op.Spec.UpgradeApproval = "Sometimes"
			op.Spec.RemovalBehavior.InstallPlans = "Later"
		}, [][2]string{
			{"spec.subscription.name", "Required value"},
			{"spec.upgradeApproval", `Unsupported value: "Sometimes"`},
			{"spec.allowedCSVs", `Required value: must have at least one item; use "*" to allow any version`},
			{"spec.removalBehavior.installPlans", `Unsupported value: "Later"`},
		}},
		{"unknown subscription keys", func(op *v1beta1.OperatorPolicy) {
			op.Spec.Subscription.Extra = map[string]runtime.RawExtension{"chanel": {Raw: []byte(`"fast"`)}, "approval": {Raw: []byte(`"{{ x }}"`)}}
		}, [][2]string{
			{"spec.subscription.approval", "Forbidden: unknown field: OLM's SubscriptionSpec has no such field"},
			{"spec.subscription.chanel", "Forbidden: unknown field: OLM's SubscriptionSpec has no such field"},
		}},
		{"unknown operatorGroup key, bad OLM values", func(op *v1beta1.OperatorPolicy) {
			op.Spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Extra: map[string]runtime.RawExtension{
				"upgradeStrategy":    {Raw: []byte(`"Sometimes"`)},
				"staticProvidedAPIs": {Raw: []byte(`"yes"`)},
				"targetNamespace":    {Raw: []byte(`["a"]`)},
			}}
		}, [][2]string{
			{"spec.operatorGroup.staticProvidedAPIs", `Invalid value: "yes": must be true or false`},
			{"spec.operatorGroup.targetNamespace", "Forbidden: unknown field: OLM's OperatorGroupSpec has no such field"},
			{"spec.operatorGroup.upgradeStrategy", `Unsupported value: "Sometimes": supported values: "Default", "TechPreviewUnsafeFailForward"`},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := story(t, 1)
			tc.edit(op)
			p, err := Normalize(op)
			if err == nil {
				t.Fatalf("no error; got %+v", p)
			}
			if !reflect.DeepEqual(p, Policy{}) {
				t.Errorf("an invalid policy gave %+v", p)
			}
			errs := fieldErrors(t, err, objectRef(op.Namespace, op.Name))
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tc.want), err)
			}
			for i, e := range errs {
				if e.Field != tc.want[i][0] || !strings.Contains(e.ErrorBody(), tc.want[i][1]) {
					t.Errorf("error %d = %q; want field %s, body containing %q", i, e, tc.want[i][0], tc.want[i][1])
				}
			}
		})
	}
}

func TestNormalizeNil(t *testing.T) {
	if _, err := Normalize(nil); err == nil {
		t.Fatal("a nil OperatorPolicy normalised")
	}
}
