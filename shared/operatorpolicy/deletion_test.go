package operatorpolicy

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

func TestSpellingOf(t *testing.T) {
	sub := v1beta1.Subscription{Name: "op"}
	tests := []struct {
		name string
		spec v1beta1.OperatorPolicySpec
		want Spelling
	}{
		{"nothing but the subscription", v1beta1.OperatorPolicySpec{Subscription: sub}, SpellingOCM},
		{"shared removalBehavior fields only", v1beta1.OperatorPolicySpec{Subscription: sub,
			RemovalBehavior: v1beta1.RemovalBehavior{Subscriptions: v1beta1.RemovalDelete}}, SpellingOCM},
		{"allowedCSVs", v1beta1.OperatorPolicySpec{Subscription: sub, AllowedCSVs: []string{"*"}}, SpellingFleetpolicy},
		{"statusConfig", v1beta1.OperatorPolicySpec{Subscription: sub, StatusConfig: &v1beta1.StatusConfig{}}, SpellingFleetpolicy},
		{"subscription.installPlanApproval", v1beta1.OperatorPolicySpec{
			Subscription: v1beta1.Subscription{Name: "op", InstallPlanApproval: "Manual"}}, SpellingFleetpolicy},
		{"operatorGroup.target", v1beta1.OperatorPolicySpec{Subscription: sub,
			OperatorGroup: &v1beta1.OperatorGroup{Name: "og", Target: &v1beta1.OperatorGroupTarget{Namespaces: []string{"a"}}}}, SpellingFleetpolicy},
		{"removalBehavior.installPlans", v1beta1.OperatorPolicySpec{Subscription: sub,
			RemovalBehavior: v1beta1.RemovalBehavior{InstallPlans: v1beta1.RemovalKeep}}, SpellingFleetpolicy},
		{"removalBehavior.apiServiceDefinitions", v1beta1.OperatorPolicySpec{Subscription: sub,
			RemovalBehavior: v1beta1.RemovalBehavior{APIServiceDefinitions: v1beta1.RemovalKeep}}, SpellingFleetpolicy},
		{"complianceType", v1beta1.OperatorPolicySpec{Subscription: sub, ComplianceType: policyv1.MustHave}, SpellingOCM},
		{"upgradeApproval", v1beta1.OperatorPolicySpec{Subscription: sub, UpgradeApproval: "None"}, SpellingOCM},
		{"versions", v1beta1.OperatorPolicySpec{Subscription: sub, Versions: []string{}}, SpellingOCM},
		{"fleetpolicy field mixed with complianceType", v1beta1.OperatorPolicySpec{Subscription: sub,
			AllowedCSVs: []string{"*"}, ComplianceType: policyv1.MustHave}, SpellingOCM},
		{"fleetpolicy field mixed with upgradeApproval", v1beta1.OperatorPolicySpec{Subscription: sub,
			StatusConfig: &v1beta1.StatusConfig{}, UpgradeApproval: "Automatic"}, SpellingOCM},
		{"fleetpolicy field mixed with versions", v1beta1.OperatorPolicySpec{Subscription: sub,
			AllowedCSVs: []string{"a.v1"}, Versions: []string{"a.v1"}}, SpellingOCM},
		{"fleetpolicy field mixed with complianceConfig", v1beta1.OperatorPolicySpec{Subscription: sub,
			AllowedCSVs: []string{"*"}, ComplianceConfig: &v1beta1.ComplianceConfig{}}, SpellingOCM},
		{"fleetpolicy field mixed with operatorGroup.targetNamespaces", v1beta1.OperatorPolicySpec{Subscription: sub, AllowedCSVs: []string{"*"},
			OperatorGroup: &v1beta1.OperatorGroup{Name: "og", TargetNamespaces: &runtime.RawExtension{Raw: []byte(`["a"]`)}}}, SpellingOCM},
		{"fleetpolicy field mixed with operatorGroup.selector", v1beta1.OperatorPolicySpec{Subscription: sub, AllowedCSVs: []string{"*"},
			OperatorGroup: &v1beta1.OperatorGroup{Name: "og", Selector: &runtime.RawExtension{Raw: []byte(`{}`)}}}, SpellingOCM},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SpellingOf(&tc.spec); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFleetpolicyOnly(t *testing.T) {
	sub := v1beta1.Subscription{Name: "op"}
	tests := []struct {
		name        string
		annotations map[string]string
		spec        v1beta1.OperatorPolicySpec
		want        []string
	}{
		{"OCM's spelling", nil, v1beta1.OperatorPolicySpec{Subscription: sub, ComplianceType: policyv1.MustHave, UpgradeApproval: "None", Versions: []string{"a.v1"}}, nil},
		{"fleetpolicy fields, even mixed with OCM's", nil, v1beta1.OperatorPolicySpec{Subscription: v1beta1.Subscription{Name: "op", InstallPlanApproval: "Manual"},
			AllowedCSVs: []string{"*"}, UpgradeApproval: "None"}, []string{"spec.allowedCSVs", "spec.subscription.installPlanApproval"}},
		{"the on-deletion annotation", map[string]string{AnnotationOnDeletion: "Never", "other": "x"}, v1beta1.OperatorPolicySpec{Subscription: sub,
			StatusConfig: &v1beta1.StatusConfig{}}, []string{"spec.statusConfig", "metadata.annotations[" + AnnotationOnDeletion + "]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := &v1beta1.OperatorPolicy{Spec: tc.spec}
			op.Annotations = tc.annotations
			if got := FleetpolicyOnly(op); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOnDeletionInvalidAnnotation(t *testing.T) {
	op := story(t, 1)
	op.Annotations = map[string]string{AnnotationOnDeletion: "sometimes"}
	_, err := Normalize(op)
	want := `OperatorPolicy local-cluster/strimzi-policy: metadata.annotations[operatorpolicy.fleetpolicy.io/remove-on-deletion]: Unsupported value: "sometimes": supported values: "Never", "UserDeletion", "Always"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCauseOfDeletion(t *testing.T) {
	tests := []struct {
		name        string
		annotation  string // "-" for none
		ownerGone   bool
		want        DeletionCause
		wantTransit bool
	}{
		{"unmarked, owner there or none", "-", false, DeletedByUser, false},
		{"unmarked, owner Policy gone (garbage collector)", "-", true, DeletedPolicyGone, true},
		{"dependencies unsatisfied", "DependenciesUnsatisfied", false, DeletedDependenciesUnsatisfied, true},
		{"policy gone", "PolicyGone", false, DeletedPolicyGone, true},
		{"template removed", "TemplateRemoved", false, DeletedTemplateRemoved, false},
		{"a template of the policy in error", "TemplateError", false, DeletedTemplateError, true},
		{"template removed wins over owner gone", "TemplateRemoved", true, DeletedTemplateRemoved, false},
		{"unknown mark counts as transient", "Whatever", false, DeletedPolicyGone, true},
		{"empty mark counts as transient", "", false, DeletedPolicyGone, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.annotation != "-" {
				annotations[AnnotationDeletionCause] = tc.annotation
			}
			got := CauseOfDeletion(annotations, tc.ownerGone)
			if got != tc.want || got.Transient() != tc.wantTransit {
				t.Errorf("got %q (transient %v), want %q (transient %v)", got, got.Transient(), tc.want, tc.wantTransit)
			}
		})
	}
}

func TestRemovesOnDeletion(t *testing.T) {
	causes := []DeletionCause{DeletedByUser, DeletedTemplateRemoved, DeletedDependenciesUnsatisfied, DeletedPolicyGone, DeletedTemplateError}
	tests := []struct {
		name       string
		enforce    bool
		remove     bool
		onDeletion OnDeletion
		// want is, per cause in the order of causes, whether the deletion removes.
		want          [5]bool
		wantFinalizer bool
	}{
		{"fleetpolicy spelling, enforce: user deletions only", true, false, RemoveOnUserDeletion, [5]bool{true, true, false, false, false}, true},
		{"OCM spelling, enforce: never", true, false, RemoveNever, [5]bool{}, false},
		{"Always, enforce: every deletion", true, false, RemoveAlways, [5]bool{true, true, true, true, true}, true},
		{"fleetpolicy spelling, inform: never", false, false, RemoveOnUserDeletion, [5]bool{}, false},
		{"Always, inform: never", false, false, RemoveAlways, [5]bool{}, false},
		{"mustnothave already removes: no finalizer", true, true, RemoveAlways, [5]bool{true, true, true, true, true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Enforce: tc.enforce, Remove: tc.remove, OnDeletion: tc.onDeletion}
			for i, cause := range causes {
				if got := RemovesOnDeletion(p, cause); got != tc.want[i] {
					t.Errorf("cause %q: removes %v, want %v", cause, got, tc.want[i])
				}
			}
			if got := HoldsFinalizer(p); got != tc.wantFinalizer {
				t.Errorf("holds a finalizer: %v, want %v", got, tc.wantFinalizer)
			}
		})
	}
}
