package operatorpolicy

import (
	"reflect"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// packageManifest is a PackageManifest of strimzi as packageserver serves it:
// catalog and catalogNS (left out when empty), defaultChannel (left out when
// empty), and channels, each with the suggested namespace of its current CSV
// (no annotation when empty).
func packageManifest(catalog, catalogNS, defaultChannel string, suggestedByChannel ...[2]string) *unstructured.Unstructured {
	status := map[string]any{"packageName": strimzi}
	for key, value := range map[string]string{"catalogSource": catalog, "catalogSourceNamespace": catalogNS, "defaultChannel": defaultChannel} {
		if value != "" {
			status[key] = value
		}
	}
	var channels []any
	for _, c := range suggestedByChannel {
		desc := map[string]any{"displayName": "Strimzi"}
		if c[1] != "" {
			desc["annotations"] = map[string]any{SuggestedNamespaceAnnotation: c[1], "capabilities": "Deep Insights"}
		}
		channels = append(channels, map[string]any{"name": c[0], "currentCSV": csv351, "currentCSVDesc": desc})
	}
	if channels != nil {
		status["channels"] = channels
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "packages.operators.coreos.com/v1",
		"kind":       "PackageManifest",
		"metadata":   map[string]any{"name": strimzi, "namespace": "default"},
		"status":     status,
	}}
}

func relatedSubscriptions(namespaces ...string) []policyv1.RelatedObject {
	out := []policyv1.RelatedObject{{Object: policyv1.ObjectResource{Kind: "OperatorGroup", Metadata: policyv1.ObjectMetadata{Namespace: "og-only", Name: "og"}}}}
	for _, ns := range namespaces {
		out = append(out, policyv1.RelatedObject{Object: policyv1.ObjectResource{Kind: "Subscription", Metadata: policyv1.ObjectMetadata{Namespace: ns, Name: strimzi}}})
	}
	return out
}

func existingSubscription(ns, channel, source, sourceNS string) *operatorsv1alpha1.Subscription {
	return &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strimzi},
		Spec:       &operatorsv1alpha1.SubscriptionSpec{Package: strimzi, Channel: channel, CatalogSource: source, CatalogSourceNamespace: sourceNS},
	}
}

// unsetAll leaves story 1's subscription with only its package.
func unsetAll(s *v1beta1.OperatorPolicySpec) {
	s.Subscription.Namespace, s.Subscription.Channel, s.Subscription.Source, s.Subscription.SourceNamespace = "", "", "", ""
}

func TestApplySubscriptionDefaults(t *testing.T) {
	pm := packageManifest(catalog, catalogNS, "stable", [2]string{"candidate", "candidate-ns"}, [2]string{"stable", "strimzi-suggested"})
	type want struct{ namespace, channel, source, sourceNS string }
	tests := []struct {
		name string
		edit func(*v1beta1.OperatorPolicySpec)
		from SubscriptionDefaultsFrom
		want want
	}{
		{"nothing unset: the PackageManifest is not looked at", nil,
			SubscriptionDefaultsFrom{PackageManifest: packageManifest("other", "other-ns", "fast")},
			want{opsNS, "stable", catalog, catalogNS}},
		{"everything from the PackageManifest: catalog, default channel, suggested namespace of that channel", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: pm, DefaultNamespace: "fallback"},
			want{"strimzi-suggested", "stable", catalog, catalogNS}},
		{"the suggested namespace is the policy's channel's", func(s *v1beta1.OperatorPolicySpec) { unsetAll(s); s.Subscription.Channel = "candidate" },
			SubscriptionDefaultsFrom{PackageManifest: pm},
			want{"candidate-ns", "candidate", catalog, catalogNS}},
		{"the only Subscription in relatedObjects is adopted before the suggested namespace", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: pm, Related: relatedSubscriptions("adopted")},
			want{"adopted", "stable", catalog, catalogNS}},
		{"two Subscriptions in relatedObjects: none is adopted", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: pm, Related: relatedSubscriptions("a", "b")},
			want{"strimzi-suggested", "stable", catalog, catalogNS}},
		{"no suggested namespace: the default namespace", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: packageManifest(catalog, catalogNS, "stable", [2]string{"stable", ""}), DefaultNamespace: "fallback"},
			want{"fallback", "stable", catalog, catalogNS}},
		{"no such channel in the PackageManifest: the default namespace", func(s *v1beta1.OperatorPolicySpec) { unsetAll(s); s.Subscription.Channel = "nightly" },
			SubscriptionDefaultsFrom{PackageManifest: pm, DefaultNamespace: "fallback"},
			want{"fallback", "nightly", catalog, catalogNS}},
		{"a namespace set is kept; the channel is defaulted", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Channel = "" },
			SubscriptionDefaultsFrom{PackageManifest: pm, Related: relatedSubscriptions("adopted"), DefaultNamespace: "fallback"},
			want{opsNS, "stable", catalog, catalogNS}},
		{"a catalog given that matches the PackageManifest's", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Namespace = "" },
			SubscriptionDefaultsFrom{PackageManifest: pm},
			want{"strimzi-suggested", "stable", catalog, catalogNS}},
		{"only the source given: its namespace is the PackageManifest's", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.SourceNamespace = "" },
			SubscriptionDefaultsFrom{PackageManifest: pm},
			want{opsNS, "stable", catalog, catalogNS}},
		{"no PackageManifest: the Subscription in the policy's namespace is adopted", func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.Channel, s.Subscription.Source, s.Subscription.SourceNamespace = "", "", ""
		}, SubscriptionDefaultsFrom{Existing: existingSubscription(opsNS, "fast", "mirror", "mirrors")},
			want{opsNS, "fast", "mirror", "mirrors"}},
		{"no PackageManifest: the Subscription of relatedObjects is adopted, filling only what is unset", func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.Namespace, s.Subscription.Source = "", ""
		}, SubscriptionDefaultsFrom{Related: relatedSubscriptions("adopted"), Existing: existingSubscription("adopted", "fast", "mirror", "mirrors")},
			want{"adopted", "stable", "mirror", catalogNS}},
		{"no PackageManifest: an adopted Subscription without a spec adopts its namespace only", unsetAll,
			SubscriptionDefaultsFrom{Related: relatedSubscriptions("adopted"), Existing: &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: "adopted", Name: strimzi}}},
			want{"adopted", "", "", ""}},
		{"only the namespace unset, no suggestion: the default namespace", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Namespace = "" },
			SubscriptionDefaultsFrom{PackageManifest: packageManifest(catalog, catalogNS, "stable"), DefaultNamespace: "fallback"},
			want{"fallback", "stable", catalog, catalogNS}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := normalized(t, 1, tc.edit)
			got, err := ApplySubscriptionDefaults(p, tc.from)
			if err != nil {
				t.Fatal(err)
			}
			s := got.Subscription
			if g := (want{s.Namespace, s.Channel, s.Source, s.SourceNamespace}); g != tc.want {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
			// Everything else is p's.
			got.Subscription, p.Subscription = Subscription{}, Subscription{}
			if !reflect.DeepEqual(got, p) {
				t.Errorf("changed more than the subscription: %+v", got)
			}
		})
	}
}

func TestApplySubscriptionDefaultsOperatorGroup(t *testing.T) {
	pm := packageManifest(catalog, catalogNS, "stable", [2]string{"stable", "strimzi-suggested"})
	p := normalized(t, 1, func(s *v1beta1.OperatorPolicySpec) {
		unsetAll(s)
		s.OperatorGroup = &v1beta1.OperatorGroup{Name: "og"}
	})
	got, err := ApplySubscriptionDefaults(p, SubscriptionDefaultsFrom{PackageManifest: pm})
	if err != nil {
		t.Fatal(err)
	}
	if got.OperatorGroup.Namespace != "strimzi-suggested" || p.OperatorGroup.Namespace != "" {
		t.Errorf("OperatorGroup namespace %q (the policy's %q), want the defaulted subscription namespace", got.OperatorGroup.Namespace, p.OperatorGroup.Namespace)
	}
}

func TestApplySubscriptionDefaultsErrors(t *testing.T) {
	pm := packageManifest(catalog, catalogNS, "stable", [2]string{"stable", "strimzi-suggested"})
	tests := []struct {
		name       string
		edit       func(*v1beta1.OperatorPolicySpec)
		from       SubscriptionDefaultsFrom
		wantFields string
		// wantReason is OCM's message, word for word.
		wantReason string
	}{
		{"no PackageManifest and no Subscription to adopt", unsetAll,
			SubscriptionDefaultsFrom{DefaultNamespace: "fallback"},
			"spec.subscription",
			"the subscription defaults could not be determined because the PackageManifest was not found (unset: namespace, channel, source, sourceNamespace)"},
		{"no PackageManifest, a namespace set but no Subscription there", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Channel = "" },
			SubscriptionDefaultsFrom{Related: relatedSubscriptions("adopted")},
			"spec.subscription",
			"the subscription defaults could not be determined because the PackageManifest was not found (unset: channel)"},
		{"no PackageManifest, two Subscriptions in relatedObjects", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Namespace = "" },
			SubscriptionDefaultsFrom{Related: relatedSubscriptions("a", "b"), Existing: existingSubscription("a", "stable", catalog, catalogNS), DefaultNamespace: "fallback"},
			"spec.subscription",
			"the subscription defaults could not be determined because the PackageManifest was not found (unset: namespace)"},
		{"the PackageManifest names no catalog", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Channel = "" },
			SubscriptionDefaultsFrom{PackageManifest: packageManifest(catalog, "", "stable")},
			"spec.subscription",
			"the subscription defaults could not be determined because the PackageManifest didn't specify a catalog (unset: channel)"},
		{"the policy's source differs from the PackageManifest's", func(s *v1beta1.OperatorPolicySpec) { s.Subscription.Channel, s.Subscription.Source = "", "mirror" },
			SubscriptionDefaultsFrom{PackageManifest: pm},
			"spec.subscription.source",
			"the subscription defaults could not be determined because the catalog specified in the policy does not match what was found in the PackageManifest on the cluster"},
		{"the policy's sourceNamespace differs from the PackageManifest's", func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.Namespace, s.Subscription.SourceNamespace = "", "mirrors"
		},
			SubscriptionDefaultsFrom{PackageManifest: pm},
			"spec.subscription.sourceNamespace",
			"the subscription defaults could not be determined because the catalog specified in the policy does not match what was found in the PackageManifest on the cluster"},
		{"no default channel in the PackageManifest", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: packageManifest(catalog, catalogNS, "")},
			"spec.subscription.channel",
			"the default channel could not be determined because the PackageManifest didn't specify one"},
		{"no namespace from anywhere", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: packageManifest(catalog, catalogNS, "stable", [2]string{"stable", ""})},
			"spec.subscription.namespace",
			"namespace is required in spec.subscription"},
		{"a suggested namespace that is not a namespace name", unsetAll,
			SubscriptionDefaultsFrom{PackageManifest: packageManifest(catalog, catalogNS, "stable", [2]string{"stable", "Not_A_Namespace"})},
			"spec.subscription.namespace",
			`a lowercase RFC 1123 label must consist of`},
		{"an operatorGroup namespace other than the defaulted one", func(s *v1beta1.OperatorPolicySpec) {
			s.Subscription.Namespace = ""
			s.OperatorGroup = &v1beta1.OperatorGroup{Name: "og", Namespace: "elsewhere"}
		}, SubscriptionDefaultsFrom{PackageManifest: pm},
			"spec.operatorGroup.namespace",
			`must be the subscription's namespace "strimzi-suggested"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ApplySubscriptionDefaults(normalized(t, 1, tc.edit), tc.from)
			var fields []string
			for _, e := range fieldErrors(t, err, "local-cluster/strimzi-policy") {
				fields = append(fields, e.Field)
				if !strings.HasPrefix(e.Detail, tc.wantReason) {
					t.Errorf("%s: detail %q, want %q", e.Field, e.Detail, tc.wantReason)
				}
			}
			if got := strings.Join(fields, ", "); got != tc.wantFields {
				t.Errorf("fields %s, want %s", got, tc.wantFields)
			}
		})
	}
}

func TestAdoptableNamespace(t *testing.T) {
	set := normalized(t, 1, nil)
	unset := normalized(t, 1, unsetAll)
	for _, tc := range []struct {
		name    string
		p       Policy
		related []policyv1.RelatedObject
		want    string
	}{
		{"the policy's namespace first", set, relatedSubscriptions("adopted"), opsNS},
		{"the only related Subscription", unset, relatedSubscriptions("adopted"), "adopted"},
		{"two related Subscriptions", unset, relatedSubscriptions("a", "b"), ""},
		{"none", unset, relatedSubscriptions(), ""},
	} {
		if got := AdoptableNamespace(tc.p, tc.related); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
