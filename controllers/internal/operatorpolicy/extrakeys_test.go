package operatorpolicy_test

import (
	"context"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	sharedop "github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// TestSubscriptionAndOperatorGroupKeys: keys of spec.subscription and
// spec.operatorGroup that the API server keeps but the types lack are never
// dropped silently. OLM's upgradeStrategy and staticProvidedAPIs are set on the
// OperatorGroup and kept there; any other key is an invalid spec naming it.
func TestSubscriptionAndOperatorGroupKeys(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "extra-keys")
	create := func(name string, subscription, operatorGroup map[string]any) {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1beta1.GroupVersion.String(), "kind": "OperatorPolicy",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"remediationAction": "enforce", "allowedCSVs": []any{"*"},
				"subscription": subscription,
			},
		}}
		if operatorGroup != nil {
			u.Object["spec"].(map[string]any)["operatorGroup"] = operatorGroup
		}
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	create("typo", map[string]any{"name": "typo-op", "namespace": ns, "chanel": "stable", "source": catalog, "sourceNamespace": catalogNS}, nil)
	waitPolicy(t, ns, "typo", "the unknown subscription key reported", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			"spec.subscription.chanel: Forbidden: unknown field: OLM's SubscriptionSpec has no such field"),
	))
	if exists(t, subscription(ns, "typo-op")) {
		t.Error("a Subscription was created for a policy with an unknown subscription key")
	}

	og := map[string]any{"name": "og-fields", "upgradeStrategy": "TechPreviewUnsafeFailForward", "staticProvidedAPIs": true}
	create("og-fields", map[string]any{"name": "og-fields-op", "namespace": ns, "channel": "stable", "source": catalog, "sourceNamespace": catalogNS}, og)
	waitPolicy(t, ns, "og-fields", "Compliant", compliance(policyv1.Compliant))
	got := operatorGroup(ns, "og-fields")
	if !exists(t, got) {
		t.Fatal("the OperatorGroup was not created")
	}
	if got.Spec.UpgradeStrategy != operatorsv1.UpgradeStrategyUnsafeFailForward || !got.Spec.StaticProvidedAPIs {
		t.Fatalf("OperatorGroup spec %+v lacks the policy's upgradeStrategy / staticProvidedAPIs", got.Spec)
	}
	// The policy as the typed client reads it still has the keys (a typed
	// update would not drop them).
	op := &v1beta1.OperatorPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "og-fields"}, op); err != nil {
		t.Fatal(err)
	}
	if len(op.Spec.OperatorGroup.Extra) != 2 {
		t.Errorf("typed read lost keys: %v", op.Spec.OperatorGroup.Extra)
	}

	// Drift is reported and fixed.
	got.Spec.UpgradeStrategy = operatorsv1.UpgradeStrategyDefault
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the upgradeStrategy set back", func() string {
		if !exists(t, got) {
			return "OperatorGroup gone"
		}
		if got.Spec.UpgradeStrategy != operatorsv1.UpgradeStrategyUnsafeFailForward {
			return "upgradeStrategy is " + string(got.Spec.UpgradeStrategy)
		}
		return ""
	})

	// An unknown operatorGroup key is invalid too.
	create("og-typo", map[string]any{"name": "og-typo-op", "namespace": ns, "channel": "stable", "source": catalog, "sourceNamespace": catalogNS},
		map[string]any{"name": "og-typo", "targetNamespace": []any{ns}})
	waitPolicy(t, ns, "og-typo", "the unknown operatorGroup key reported", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			"spec.operatorGroup.targetNamespace: Forbidden: unknown field: OLM's OperatorGroupSpec has no such field"),
	))
}
