package spoke_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// TestOperatorPolicyKeptWhenTemplateSyncDeletes: an enforcing OperatorPolicy
// in fleetpolicy's spelling (which removes its operator when a user deletes it)
// keeps its operator when template sync deletes it because its dependency is
// no longer met, because the hub could not resolve it (hub-templates-error),
// and when its policy leaves the cluster (the root deleted): those deletions
// are transient, and template sync says so on the template.
func TestOperatorPolicyKeptWhenTemplateSyncDeletes(t *testing.T) {
	const ns, data, operators, pkg = "opkeep", "opkeep-data", "opkeep-operators", "keep-op"
	ctx := context.Background()
	configMap(t, data, "gate")
	if err := localplane.EnsureNamespace(ctx, spokeC, operators); err != nil {
		t.Fatal(err)
	}
	// The operator's Subscription, as OLM would have it (no OLM runs here).
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Namespace: operators, Name: pkg},
		Spec:       &operatorsv1alpha1.SubscriptionSpec{Package: pkg, Channel: "stable", CatalogSource: "catalog", CatalogSourceNamespace: data},
	}
	if err := spokeC.Create(ctx, sub); err != nil {
		t.Fatal(err)
	}
	// opPolicy is the root policy of the OperatorPolicy, with annotations
	// (a YAML flow mapping) on the template.
	opPolicy := func(annotations string) string {
		return policyOf(ns, "op", fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy,
        metadata: {name: %s, annotations: %s},
        spec: {remediationAction: enforce, allowedCSVs: ["*"],
          subscription: {name: %s, namespace: %s, channel: stable, source: catalog, sourceNamespace: %s}}}`, pkg, annotations, pkg, operators, data),
			dependsOn("gate", policyv1.Compliant))
	}
	testkit.Apply(t, hubC, policyOf(ns, "gate", configPolicy("opkeep-gate", "inform", "musthave", data, "gate"), "")+"---"+opPolicy("{}"))
	bindToCluster(t, ns, "gate", "op")

	waitHeld := func(what string) {
		t.Helper()
		testkit.Eventually(t, 45*time.Second, what, func() string {
			op := &v1beta1.OperatorPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: pkg}}
			if !exists(t, spokeC, op) {
				return "the OperatorPolicy template is not on the cluster"
			}
			if !controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer) {
				return "the OperatorPolicy holds no finalizer (so its deletion would not be handled)"
			}
			return ""
		})
	}
	waitDeletedKeeping := func(what string) {
		t.Helper()
		testkit.Eventually(t, 45*time.Second, what, func() string {
			if exists(t, spokeC, &v1beta1.OperatorPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: pkg}}) {
				return "the OperatorPolicy template is still there"
			}
			return ""
		})
		got := &operatorsv1alpha1.Subscription{}
		if err := spokeC.Get(ctx, client.ObjectKeyFromObject(sub), got); err != nil || !got.DeletionTimestamp.IsZero() {
			t.Fatalf("%s: the operator's Subscription was removed (%v)", what, err)
		}
	}

	waitHeld("the enforcing OperatorPolicy in fleetpolicy's spelling is synced once its dependency is met")
	deleteConfigMap(t, data, "gate")
	waitDeletedKeeping("the template is deleted while its dependency is NonCompliant")

	configMap(t, data, "gate")
	waitHeld("the template is back once its dependency is met again")
	testkit.Apply(t, hubC, opPolicy(`{policy.open-cluster-management.io/hub-templates-error: "error calling lookup: the ConfigMap is missing"}`))
	waitDeletedKeeping("the template is removed while the hub could not resolve it")

	testkit.Apply(t, hubC, opPolicy("{}"))
	waitHeld("the template is back once the hub resolves it")
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "op"}}
	if err := hubC.Delete(ctx, root); err != nil {
		t.Fatal(err)
	}
	waitDeletedKeeping("the template is deleted once its root policy is deleted")
}
