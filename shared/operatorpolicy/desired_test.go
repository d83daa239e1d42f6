package operatorpolicy

import (
	"errors"
	"reflect"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

func TestDesiredSubscriptionStory1(t *testing.T) {
	got := DesiredSubscription(normalized(t, 1, nil))
	want := &operatorsv1alpha1.Subscription{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
		ObjectMeta: metav1.ObjectMeta{Name: strimzi, Namespace: opsNS},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource: catalog, CatalogSourceNamespace: catalogNS, Package: strimzi, Channel: "stable",
			StartingCSV: csv350, InstallPlanApproval: operatorsv1alpha1.ApprovalManual,
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestDesiredSubscriptionApproval(t *testing.T) {
	tests := []struct {
		name  string
		story int
		edit  func(*v1beta1.OperatorPolicySpec)
		want  operatorsv1alpha1.Approval
	}{
		{"enforce, restricted, Automatic asked: forced Manual", 1, func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.InstallPlanApproval = "Automatic"
		}, operatorsv1alpha1.ApprovalManual},
		{"enforce, restricted through versions: forced Manual", 5, func(s *v1beta1.OperatorPolicySpec) {
			s.AllowedCSVs, s.Versions = nil, []string{csv350}
		}, operatorsv1alpha1.ApprovalManual},
		{"inform, restricted, Automatic: not forced", 1, func(s *v1beta1.OperatorPolicySpec) {
			s.RemediationAction = "inform"
			s.Subscription.InstallPlanApproval = "Automatic"
		}, operatorsv1alpha1.ApprovalAutomatic},
		{"enforce, all allowed, Automatic", 5, nil, operatorsv1alpha1.ApprovalAutomatic},
		{"enforce, all allowed, upgradeApproval None", 5, func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.InstallPlanApproval, s.UpgradeApproval = "", "None"
		}, operatorsv1alpha1.ApprovalManual},
		{"inform, all allowed (story 4)", 4, nil, operatorsv1alpha1.ApprovalAutomatic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DesiredSubscription(normalized(t, tc.story, tc.edit)).Spec.InstallPlanApproval
			if got != tc.want {
				t.Errorf("installPlanApproval %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDesiredOperatorGroup(t *testing.T) {
	allNamespaces := []operatorsv1alpha1.InstallMode{{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
		{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true}}
	ownOnly := []operatorsv1alpha1.InstallMode{{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
		{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: false}}
	defaultOG := func(ns string) *operatorsv1.OperatorGroup {
		return &operatorsv1.OperatorGroup{
			TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup"},
			ObjectMeta: metav1.ObjectMeta{Name: DefaultOperatorGroupName, Namespace: ns},
		}
	}
	story5OG := &operatorsv1.OperatorGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1", Kind: "OperatorGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: "og-strimzi", Namespace: appNS},
		Spec:       operatorsv1.OperatorGroupSpec{TargetNamespaces: []string{appNS}},
	}
	tests := []struct {
		name     string
		story    int
		existing []operatorsv1.OperatorGroup
		modes    []operatorsv1alpha1.InstallMode
		want     *operatorsv1.OperatorGroup
		conflict string
	}{
		{"named (story 5), none exists", 5, nil, nil, story5OG, ""},
		{"named, exists with that name", 5, []operatorsv1.OperatorGroup{operatorGroupObj(appNS, "og-strimzi")}, nil, story5OG, ""},
		{"named, another exists", 5, []operatorsv1.OperatorGroup{operatorGroupObj(appNS, "global")}, nil, nil, ReasonOperatorGroupMismatch},
		{"named, several exist", 5, []operatorsv1.OperatorGroup{operatorGroupObj(appNS, "og-strimzi"), operatorGroupObj(appNS, "b")},
			nil, nil, ReasonTooManyOperatorGroups},
		{"unnamed (story 1), none exists, modes unknown", 1, nil, nil, defaultOG(opsNS), ""},
		{"unnamed, none exists, AllNamespaces supported", 1, nil, allNamespaces, defaultOG(opsNS), ""},
		{"unnamed, none exists, AllNamespaces unsupported", 1, nil, ownOnly, nil, ReasonAllNamespacesUnsupported},
		{"unnamed, none exists, AllNamespaces not listed", 1, nil, []operatorsv1alpha1.InstallMode{}, nil, ReasonAllNamespacesUnsupported},
		{"unnamed, another exists: use it", 1, []operatorsv1.OperatorGroup{operatorGroupObj(opsNS, "global-operators")}, ownOnly, nil, ""},
		{"unnamed, the default one exists", 1, []operatorsv1.OperatorGroup{operatorGroupObj(opsNS, DefaultOperatorGroupName, "x")}, nil, defaultOG(opsNS), ""},
		{"unnamed, several exist", 1, []operatorsv1.OperatorGroup{operatorGroupObj(opsNS, "a"), operatorGroupObj(opsNS, "b")},
			allNamespaces, nil, ReasonTooManyOperatorGroups},
		{"other namespaces are ignored", 1, []operatorsv1.OperatorGroup{operatorGroupObj(appNS, "a"), operatorGroupObj(appNS, "b")},
			nil, defaultOG(opsNS), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DesiredOperatorGroup(normalized(t, tc.story, nil), tc.existing, tc.modes)
			if tc.conflict != "" {
				var conflict *OperatorGroupConflict
				if !errors.As(err, &conflict) || conflict.Reason != tc.conflict || conflict.Policy != "local-cluster/strimzi-policy" {
					t.Fatalf("got %v, %v; want a %s conflict naming the policy", got, err, tc.conflict)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestOperatorGroupConflictMessage(t *testing.T) {
	_, err := DesiredOperatorGroup(normalized(t, 1, nil),
		[]operatorsv1.OperatorGroup{operatorGroupObj(opsNS, "a"), operatorGroupObj(opsNS, "b")}, nil)
	want := "OperatorPolicy local-cluster/strimzi-policy: spec.operatorGroup: namespace openshift-operators has several OperatorGroups (a, b); " +
		"OLM installs no operator there until one remains"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
