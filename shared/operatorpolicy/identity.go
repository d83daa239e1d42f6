package operatorpolicy

import (
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// OwnSubscription is p's Subscription among subscriptions: the one named after
// the package in the subscription's namespace, as OCM's config-policy-controller
// looks it up (by that namespace and name); nil when there is none. A
// Subscription of the same name in another namespace is another operator's.
func OwnSubscription(p Policy, subscriptions []operatorsv1alpha1.Subscription) *operatorsv1alpha1.Subscription {
	for i := range subscriptions {
		if s := &subscriptions[i]; s.Namespace == p.Subscription.Namespace && s.Name == p.Subscription.Package {
			return s
		}
	}
	return nil
}

// operatorLabelPrefix is the prefix of the label OLM puts on an operator's
// components (its CSVs, their Deployments, ...).
const operatorLabelPrefix = "operators.coreos.com/"

// maxLabelName is the length limit of a label key's name part.
const maxLabelName = 63

// OperatorLabel is the key of the label OLM puts on the components of the
// operator of package pkg installed in namespace:
// operators.coreos.com/<package>.<namespace>, its name part cut to 63
// characters and then of trailing '.', '_' and '-', as OLM names an operator
// (and as OCM's config-policy-controller selects its components).
func OperatorLabel(pkg, namespace string) string {
	name := pkg + "." + namespace
	if len(name) > maxLabelName {
		name = strings.TrimRight(name[:maxLabelName], "._-")
	}
	return operatorLabelPrefix + name
}

// OperatorGroupName is the name of the OperatorGroup p makes when its
// namespace has none: the one p names, else DefaultOperatorGroupName.
func OperatorGroupName(p Policy) string {
	if p.OperatorGroup != nil {
		return p.OperatorGroup.Name
	}
	return DefaultOperatorGroupName
}

// SubscriptionField is a field of spec.subscription that the managed cluster
// fills in when a policy leaves it unset (ApplySubscriptionDefaults): its
// name under spec.subscription.
type SubscriptionField string

// The spec.subscription fields the managed cluster defaults.
const (
	SubscriptionNamespace       SubscriptionField = "namespace"
	SubscriptionChannel         SubscriptionField = "channel"
	SubscriptionSource          SubscriptionField = "source"
	SubscriptionSourceNamespace SubscriptionField = "sourceNamespace"
)

// Path is the field's path in an OperatorPolicy: spec.subscription.<name>.
func (f SubscriptionField) Path() *field.Path { return fieldSubscription.Child(string(f)) }

// ClusterDefaultedFields names the fields of s that are left to the managed
// cluster: unset, they are filled in when the policy is reconciled there
// (ApplySubscriptionDefaults), from the operator's PackageManifest, an existing
// Subscription or the controller's default namespace. In this order:
// SubscriptionNamespace, SubscriptionChannel, SubscriptionSource,
// SubscriptionSourceNamespace. Without the managed cluster's controller
// nothing fills them in, except the channel, which OLM defaults to the
// package's default channel.
func ClusterDefaultedFields(s *v1beta1.Subscription) []SubscriptionField {
	return unsetFields(Subscription{Namespace: s.Namespace, Channel: s.Channel, Source: s.Source, SourceNamespace: s.SourceNamespace})
}

// unsetFields names the fields of s that ApplySubscriptionDefaults fills in.
func unsetFields(s Subscription) []SubscriptionField {
	var fields []SubscriptionField
	for _, f := range []struct {
		field SubscriptionField
		value string
	}{
		{SubscriptionNamespace, s.Namespace},
		{SubscriptionChannel, s.Channel},
		{SubscriptionSource, s.Source},
		{SubscriptionSourceNamespace, s.SourceNamespace},
	} {
		if f.value == "" {
			fields = append(fields, f.field)
		}
	}
	return fields
}
