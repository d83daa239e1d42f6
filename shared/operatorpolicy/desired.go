package operatorpolicy

import (
	"fmt"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultOperatorGroupName names the AllNamespaces OperatorGroup made for a policy
// that names none. The name is fixed so that policies on one namespace want the
// same object and a rendered manifest is stable.
const DefaultOperatorGroupName = "fleetpolicy-all-namespaces"

var (
	subscriptionType  = metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.SubscriptionKind}
	operatorGroupType = metav1.TypeMeta{APIVersion: operatorsv1.GroupVersion.String(), Kind: operatorsv1.OperatorGroupKind}
)

// DesiredSubscription is the Subscription p wants: named after the package, in
// the subscription's namespace. installPlanApproval is Manual when p enforces
// and restricts the allowed CSVs (so that only allowed InstallPlans are
// approved), and p.Approval otherwise. Empty source fields stay empty;
// ApplySubscriptionDefaults fills them in first where the cluster offers them.
func DesiredSubscription(p Policy) *operatorsv1alpha1.Subscription {
	approval := p.Approval
	if p.Enforce && !p.Allowed.All {
		approval = operatorsv1alpha1.ApprovalManual
	}
	s := p.Subscription
	return &operatorsv1alpha1.Subscription{
		TypeMeta:   subscriptionType,
		ObjectMeta: metav1.ObjectMeta{Name: s.Package, Namespace: s.Namespace},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource:          s.Source,
			CatalogSourceNamespace: s.SourceNamespace,
			Package:                s.Package,
			Channel:                s.Channel,
			StartingCSV:            s.StartingCSV,
			InstallPlanApproval:    approval,
			Config:                 s.Config.DeepCopy(),
		},
	}
}

// Reasons of an OperatorGroupConflict; they are also condition reasons.
const (
	ReasonTooManyOperatorGroups    = "TooManyOperatorGroups"
	ReasonOperatorGroupMismatch    = "OperatorGroupMismatch"
	ReasonAllNamespacesUnsupported = "AllNamespacesUnsupported"
)

// OperatorGroupConflict says why no OperatorGroup can be made to fit a policy.
type OperatorGroupConflict struct {
	// Policy is the policy as namespace/name.
	Policy string
	// Reason is one of the Reason* constants above.
	Reason string
	// Detail says what is in the way.
	Detail string
}

func (e *OperatorGroupConflict) Error() string {
	return fmt.Sprintf("OperatorPolicy %s: spec.operatorGroup: %s", e.Policy, e.Detail)
}

// DesiredOperatorGroup is the OperatorGroup p needs in its subscription's
// namespace, given the OperatorGroups that exist there (others are ignored) and
// the operator's install modes (nil when unknown).
//
//   - Several existing OperatorGroups: a conflict (OLM installs nothing then).
//   - p names an OperatorGroup: that one; a conflict when another one exists.
//   - p names none and one exists: nil (the existing one is used), unless it is
//     the DefaultOperatorGroupName one, which is wanted as AllNamespaces.
//   - p names none and none exists: an AllNamespaces OperatorGroup named
//     DefaultOperatorGroupName; a conflict when the install modes are known and
//     do not include AllNamespaces.
//
// Conflicts are *OperatorGroupConflict.
func DesiredOperatorGroup(p Policy, existing []operatorsv1.OperatorGroup, installModes []operatorsv1alpha1.InstallMode) (*operatorsv1.OperatorGroup, error) {
	namespace := p.Subscription.Namespace
	var names []string
	for i := range existing {
		if existing[i].Namespace == namespace {
			names = append(names, existing[i].Name)
		}
	}
	conflict := func(reason, format string, args ...any) error {
		return &OperatorGroupConflict{Policy: p.Ref(), Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	if len(names) > 1 {
		return nil, conflict(ReasonTooManyOperatorGroups,
			"namespace %s has several OperatorGroups (%s); OLM installs no operator there until one remains",
			namespace, strings.Join(names, ", "))
	}
	if og := p.OperatorGroup; og != nil {
		if len(names) == 1 && names[0] != og.Name {
			return nil, conflict(ReasonOperatorGroupMismatch,
				"namespace %s already has OperatorGroup %s; creating %s would make two",
				namespace, names[0], og.Name)
		}
		return &operatorsv1.OperatorGroup{
			TypeMeta:   operatorGroupType,
			ObjectMeta: metav1.ObjectMeta{Name: og.Name, Namespace: namespace},
			Spec: operatorsv1.OperatorGroupSpec{
				TargetNamespaces:   append([]string(nil), og.TargetNamespaces...),
				Selector:           og.Selector.DeepCopy(),
				ServiceAccountName: og.ServiceAccountName,
				UpgradeStrategy:    og.UpgradeStrategy,
				StaticProvidedAPIs: og.StaticProvidedAPIs != nil && *og.StaticProvidedAPIs,
			},
		}, nil
	}
	if len(names) == 1 && names[0] != DefaultOperatorGroupName {
		return nil, nil
	}
	if len(names) == 0 && installModes != nil && !supportsAllNamespaces(installModes) {
		return nil, conflict(ReasonAllNamespacesUnsupported,
			"the operator does not support the AllNamespaces install mode and namespace %s has no OperatorGroup; name one in spec.operatorGroup",
			namespace)
	}
	return &operatorsv1.OperatorGroup{
		TypeMeta:   operatorGroupType,
		ObjectMeta: metav1.ObjectMeta{Name: DefaultOperatorGroupName, Namespace: namespace},
	}, nil
}

func supportsAllNamespaces(modes []operatorsv1alpha1.InstallMode) bool {
	for _, m := range modes {
		if m.Type == operatorsv1alpha1.InstallModeTypeAllNamespaces {
			return m.Supported
		}
	}
	return false
}
