package operatorpolicy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	sharedop "github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// TestManagedTemplates enforces an OperatorPolicy whose subscription's
// channel and namespace are managed-cluster templates, whose config and
// operatorGroup targetNamespaces are template strings that toLiteral makes an
// object and a list (the CRD accepts the strings where OLM's schema wants an
// object or a list): the Subscription and OperatorGroup are created with the
// resolved values. When the ConfigMap the templates read changes, the
// Subscription follows. A template that cannot be resolved makes its policy
// NonCompliant with the error, and nothing is created.
func TestManagedTemplates(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "templated")
	settings := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "op-settings"},
		Data: map[string]string{"channel": "stable", "namespace": ns, "config": `{"env": [{"name": "LEVEL", "value": "1"}]}`,
			"targets": fmt.Sprintf("[%q]", ns)},
	}
	if err := c.Create(ctx, settings); err != nil {
		t.Fatal(err)
	}
	read := func(key string) string { return fmt.Sprintf(`{{ fromConfigMap %q "op-settings" %q }}`, ns, key) }
	spec := policySpec(ns, "template-op", catalog, "*")
	spec.Subscription.Channel = read("channel")
	spec.Subscription.Namespace = read("namespace")
	literal := func(key string) *runtime.RawExtension {
		return &runtime.RawExtension{Raw: fmt.Appendf(nil, "%q", fmt.Sprintf(`{{ fromConfigMap %q "op-settings" %q | toLiteral }}`, ns, key))}
	}
	spec.Subscription.Config = literal("config")
	spec.OperatorGroup = &v1beta1.OperatorGroup{Name: "templated-og", TargetNamespaces: literal("targets")}
	createPolicy(t, ns, "templated", spec)
	waitPolicy(t, ns, "templated", "Compliant with the resolved subscription", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionCreated"),
	))
	sub := subscription(ns, "template-op")
	if !exists(t, sub) || sub.Spec.Channel != "stable" || sub.Spec.Config == nil || len(sub.Spec.Config.Env) != 1 || sub.Spec.Config.Env[0].Value != "1" {
		t.Fatalf("the Subscription does not carry the resolved channel and config: %+v", sub.Spec)
	}
	if og := operatorGroup(ns, "templated-og"); !exists(t, og) || len(og.Spec.TargetNamespaces) != 1 || og.Spec.TargetNamespaces[0] != ns {
		t.Fatalf("the OperatorGroup does not carry the resolved targetNamespaces: %+v", og.Spec)
	}

	settings.Data["config"] = `{"env": [{"name": "LEVEL", "value": "2"}]}`
	if err := c.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the Subscription follows the ConfigMap", func() string {
		sub := subscription(ns, "template-op")
		if !exists(t, sub) || sub.Spec.Config == nil || len(sub.Spec.Config.Env) != 1 || sub.Spec.Config.Env[0].Value != "2" {
			return fmt.Sprintf("config %+v", sub.Spec.Config)
		}
		return ""
	})

	other := newNamespace(t, "templated-bad")
	bad := policySpec(other, "template-op", catalog, "*")
	bad.Subscription.Channel = `{{ fromConfigMap "only-two" "args" }}`
	createPolicy(t, other, "bad", bad)
	waitPolicy(t, other, "bad", "the template error reported", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			"could not resolve the templates of spec.subscription", "wrong number of args for fromConfigMap"),
	))
	if exists(t, subscription(other, "template-op")) || exists(t, operatorGroup(other, defaultOG)) {
		t.Error("OLM objects were created from a failed resolution")
	}
}
