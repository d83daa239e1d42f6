package operatorpolicy

import (
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// TestOwnSubscription pins which Subscription is the policy's: the one named
// after the package in the subscription's namespace, as OCM looks it up by
// namespace and name.
func TestOwnSubscription(t *testing.T) {
	p := Policy{Subscription: Subscription{Package: strimzi, Namespace: appNS}}
	sub := func(namespace, name, pkg string) operatorsv1alpha1.Subscription {
		return operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       &operatorsv1alpha1.SubscriptionSpec{Package: pkg},
		}
	}
	for _, tc := range []struct {
		name string
		subs []operatorsv1alpha1.Subscription
		want int // index in subs; -1 for none
	}{
		{"none", nil, -1},
		{"named after the package in its namespace", []operatorsv1alpha1.Subscription{sub(appNS, strimzi, strimzi)}, 0},
		{"the same name in another namespace is another operator's",
			[]operatorsv1alpha1.Subscription{sub(opsNS, strimzi, strimzi), sub(appNS, strimzi, strimzi)}, 1},
		{"only in another namespace", []operatorsv1alpha1.Subscription{sub(opsNS, strimzi, strimzi)}, -1},
		{"another name for the same package is not adopted", []operatorsv1alpha1.Subscription{sub(appNS, "my-strimzi", strimzi)}, -1},
		{"the name decides, not the package it subscribes to", []operatorsv1alpha1.Subscription{sub(appNS, strimzi, "other")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OwnSubscription(p, tc.subs)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("got %s/%s, want none", got.Namespace, got.Name)
			case tc.want >= 0 && got != &tc.subs[tc.want]:
				t.Fatalf("got %v, want subs[%d]", got, tc.want)
			}
		})
	}
}

// TestOperatorLabel pins the label key OLM puts on an operator's components,
// cut as OLM cuts an operator's name.
func TestOperatorLabel(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		pkg, namespace, want string
	}{
		{strimzi, appNS, "operators.coreos.com/strimzi-kafka-operator.strimzi-app-one"},
		{long[:60], "abc", "operators.coreos.com/" + long[:60] + ".ab"},
		// Cut at 63 characters, the name would end in "-": that goes too.
		{long[:59], "ab-cd", "operators.coreos.com/" + long[:59] + ".ab"},
		{long[:62], "ns", "operators.coreos.com/" + long[:62]},
	} {
		got := OperatorLabel(tc.pkg, tc.namespace)
		if got != tc.want {
			t.Errorf("OperatorLabel(%s, %s) = %s, want %s", tc.pkg, tc.namespace, got, tc.want)
		}
		if name := strings.TrimPrefix(got, "operators.coreos.com/"); len(name) > 63 {
			t.Errorf("OperatorLabel(%s, %s): name part %q is longer than a label allows", tc.pkg, tc.namespace, name)
		}
	}
}

// TestOperatorGroupName pins the name of the OperatorGroup a policy makes.
func TestOperatorGroupName(t *testing.T) {
	if got := OperatorGroupName(Policy{}); got != DefaultOperatorGroupName {
		t.Errorf("no operatorGroup: got %s, want %s", got, DefaultOperatorGroupName)
	}
	if got := OperatorGroupName(Policy{OperatorGroup: &OperatorGroup{Name: "mine"}}); got != "mine" {
		t.Errorf("operatorGroup mine: got %s", got)
	}
}

// TestClusterDefaultedFields pins the subscription fields left to the managed
// cluster, in their order.
func TestClusterDefaultedFields(t *testing.T) {
	all := []SubscriptionField{SubscriptionNamespace, SubscriptionChannel, SubscriptionSource, SubscriptionSourceNamespace}
	for _, tc := range []struct {
		name string
		sub  v1beta1.Subscription
		want []SubscriptionField
	}{
		{"only the package", v1beta1.Subscription{Name: strimzi}, all},
		{"everything set", v1beta1.Subscription{Name: strimzi, Namespace: appNS, Channel: "stable", Source: catalog, SourceNamespace: catalogNS}, nil},
		{"no catalog", v1beta1.Subscription{Name: strimzi, Namespace: appNS, Channel: "stable"},
			[]SubscriptionField{SubscriptionSource, SubscriptionSourceNamespace}},
		{"no source namespace", v1beta1.Subscription{Name: strimzi, Namespace: appNS, Source: catalog},
			[]SubscriptionField{SubscriptionChannel, SubscriptionSourceNamespace}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterDefaultedFields(&tc.sub); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSubscriptionFieldPath pins the path of each field the managed cluster
// defaults, as the field errors about it print it.
func TestSubscriptionFieldPath(t *testing.T) {
	fields := []SubscriptionField{SubscriptionNamespace, SubscriptionChannel, SubscriptionSource, SubscriptionSourceNamespace}
	want := []string{"spec.subscription.namespace", "spec.subscription.channel", "spec.subscription.source", "spec.subscription.sourceNamespace"}
	for i, f := range fields {
		if got := f.Path().String(); got != want[i] {
			t.Errorf("%s.Path() = %s, want %s", f, got, want[i])
		}
	}
}

// TestPreviouslyCreated pins which of its objects a policy's status says it
// created: related with createdByPolicy, in the subscription's namespace,
// under the names the policy still wants.
func TestPreviouslyCreated(t *testing.T) {
	yes, no := true, false
	related := func(kind, namespace, name string, created *bool) policyv1.RelatedObject {
		ro := policyv1.RelatedObject{Object: policyv1.ObjectResource{Kind: kind,
			Metadata: policyv1.ObjectMetadata{Namespace: namespace, Name: name}}}
		if created != nil {
			ro.Properties = &policyv1.ObjectProperties{CreatedByPolicy: created}
		}
		return ro
	}
	p := Policy{Subscription: Subscription{Package: strimzi, Namespace: appNS}}
	named := p
	named.OperatorGroup = &OperatorGroup{Name: "mine", Namespace: appNS}
	for _, tc := range []struct {
		name    string
		p       Policy
		related []policyv1.RelatedObject
		want    Created
	}{
		{"nothing related", p, nil, Created{}},
		{"both created", p, []policyv1.RelatedObject{
			related("Subscription", appNS, strimzi, &yes), related("OperatorGroup", appNS, DefaultOperatorGroupName, &yes)},
			Created{Subscription: true, OperatorGroup: true}},
		{"found, not created", p, []policyv1.RelatedObject{
			related("Subscription", appNS, strimzi, &no), related("OperatorGroup", appNS, DefaultOperatorGroupName, nil)}, Created{}},
		{"created in another namespace", p, []policyv1.RelatedObject{related("Subscription", opsNS, strimzi, &yes)}, Created{}},
		{"an OperatorGroup the policy no longer names", named, []policyv1.RelatedObject{
			related("OperatorGroup", appNS, DefaultOperatorGroupName, &yes)}, Created{}},
		{"the OperatorGroup the policy names", named, []policyv1.RelatedObject{
			related("OperatorGroup", appNS, "mine", &yes)}, Created{OperatorGroup: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PreviouslyCreated(tc.related, tc.p); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
