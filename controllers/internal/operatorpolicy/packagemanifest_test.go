package operatorpolicy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	sharedop "github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// fakePackageServerCRD is a TEST-ONLY FAKE of OLM's packageserver: the real
// one is an aggregated API server (TLS, an APIService and a Service routed to
// it), which the bare test API server cannot run. This CRD serves the same
// group, version, kind and namespacing, and the tests write the status
// packageserver would compute from the catalogs. Only what the controller
// reads is faked: GET of one PackageManifest in namespace "default".
const fakePackageServerCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: packagemanifests.packages.operators.coreos.com
spec:
  group: packages.operators.coreos.com
  names: {kind: PackageManifest, listKind: PackageManifestList, plural: packagemanifests, singular: packagemanifest}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const fakePackageServerCRDName = "packagemanifests.packages.operators.coreos.com"

// installFakePackageServer serves PackageManifests (fakePackageServerCRD).
func installFakePackageServer(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	testkit.Apply(t, c, fakePackageServerCRD)
	testkit.Eventually(t, 30*time.Second, "the fake packageserver's CRD is established", func() string {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: fakePackageServerCRDName}, crd); err != nil {
			return err.Error()
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return ""
			}
		}
		return "not established"
	})
}

// removeFakePackageServer makes sure no PackageManifest API is served.
func removeFakePackageServer(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: fakePackageServerCRDName}}
	if err := c.Delete(ctx, crd); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "the fake packageserver's CRD is gone", func() string {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})
}

// putPackageManifest writes the PackageManifest of pkg, as packageserver
// serves it for a package of catalog whose default channel stable's current
// CSV suggests the namespace suggested (no annotation when empty).
func putPackageManifest(t *testing.T, pkg, catalog, suggested string) {
	t.Helper()
	annotations := ""
	if suggested != "" {
		annotations = fmt.Sprintf("annotations: {%q: %q}", sharedop.SuggestedNamespaceAnnotation, suggested)
	}
	doc := fmt.Sprintf(`
apiVersion: packages.operators.coreos.com/v1
kind: PackageManifest
metadata: {name: %[1]s, namespace: default}
spec: {}
status:
  packageName: %[1]s
  catalogSource: %[2]s
  catalogSourceNamespace: %[3]s
  defaultChannel: stable
  channels:
  - name: stable
    currentCSV: %[1]s.v1
    currentCSVDesc: {displayName: %[1]s, %[4]s}
`, pkg, catalog, catalogNS, annotations)
	testkit.Apply(t, c, doc)
}

// packageOnly is an enforcing spec that names only the package: channel,
// catalog and namespace are the cluster's to default.
func packageOnly(pkg string) v1beta1.OperatorPolicySpec {
	return v1beta1.OperatorPolicySpec{
		RemediationAction: "enforce", Severity: "medium",
		Subscription: v1beta1.Subscription{Name: pkg}, AllowedCSVs: []string{"*"},
	}
}

// TestSubscriptionDefaultsWithoutPackageManifestAPI: with no PackageManifest
// API (no packageserver), a policy that leaves the channel and catalog unset
// adopts the Subscription it finds, and one with nothing to adopt is invalid
// with OCM's message, as OCM does when the PackageManifest is not found.
func TestSubscriptionDefaultsWithoutPackageManifestAPI(t *testing.T) {
	removeFakePackageServer(t)
	ctx := context.Background()
	ns := newNamespace(t, "no-pm-api")
	sub := subscription(ns, "adopt-op")
	sub.Spec = &operatorsv1alpha1.SubscriptionSpec{Package: "adopt-op", Channel: "stable", CatalogSource: catalog, CatalogSourceNamespace: catalogNS}
	if err := c.Create(ctx, sub); err != nil {
		t.Fatal(err)
	}
	adopt := packageOnly("adopt-op")
	adopt.Subscription.Namespace = ns
	createPolicy(t, ns, "adopt", adopt)
	waitPolicy(t, ns, "adopt", "Compliant with the adopted Subscription", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionTrue, "PolicyValidated"),
		condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionMatches"),
	))

	createPolicy(t, ns, "nothing", packageOnly("nothing-op"))
	waitPolicy(t, ns, "nothing", "OCM's PackageManifest-not-found error", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			"OperatorPolicy "+ns+"/nothing: spec.subscription: Invalid value: "+
				"the subscription defaults could not be determined because the PackageManifest was not found (unset: namespace, channel, source, sourceNamespace)"),
	))
}

// TestSubscriptionDefaultsFromPackageManifest: a policy naming only its
// package installs from the PackageManifest's catalog and default channel
// into the namespace its current CSV suggests (not the policy's namespace),
// keeps that namespace once its Subscription is related, takes the
// controller's default namespace when nothing is suggested, and is invalid
// with OCM's message when it names another catalog than the PackageManifest.
func TestSubscriptionDefaultsFromPackageManifest(t *testing.T) {
	installFakePackageServer(t)
	cluster := newNamespace(t, "pm-cluster") // as a managed cluster's namespace
	const suggested, moved = "pm-op-suggested", "pm-op-moved"
	putPackageManifest(t, "pm-op", catalog, suggested)
	createPolicy(t, cluster, "pm-op", packageOnly("pm-op"))
	waitPolicy(t, cluster, "pm-op", "Compliant, installed where the PackageManifest suggests", all(
		compliance(policyv1.Compliant),
		condition(sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionCreated"),
		related("Subscription", "pm-op", "Compliant", "K8s creation success"),
	))
	sub := subscription(suggested, "pm-op")
	if !exists(t, sub) || sub.Spec.Channel != "stable" || sub.Spec.CatalogSource != catalog || sub.Spec.CatalogSourceNamespace != catalogNS {
		t.Fatalf("the Subscription in %s does not carry the PackageManifest's defaults: %+v", suggested, sub.Spec)
	}
	if exists(t, subscription(cluster, "pm-op")) {
		t.Error("a Subscription was created in the policy's own namespace")
	}

	// The Subscription in relatedObjects is adopted before the suggestion.
	putPackageManifest(t, "pm-op", catalog, moved)
	editPolicy(t, cluster, "pm-op", func(s *v1beta1.OperatorPolicySpec) { s.Severity = "high" })
	waitPolicy(t, cluster, "pm-op", "still Compliant in the adopted namespace", compliance(policyv1.Compliant))
	if exists(t, subscription(moved, "pm-op")) {
		t.Error("the Subscription moved with the PackageManifest's suggestion")
	}

	putPackageManifest(t, "pm-default-op", catalog, "")
	createPolicy(t, cluster, "pm-default-op", packageOnly("pm-default-op"))
	waitPolicy(t, cluster, "pm-default-op", "Compliant in the default namespace", compliance(policyv1.Compliant))
	if !exists(t, subscription(defaultNamespace, "pm-default-op")) {
		t.Errorf("no Subscription in the controller's default namespace %s", defaultNamespace)
	}

	mismatch := packageOnly("pm-op")
	mismatch.Subscription.Source, mismatch.Subscription.SourceNamespace = "other-catalog", catalogNS
	createPolicy(t, cluster, "mismatch", mismatch)
	waitPolicy(t, cluster, "mismatch", "OCM's catalog mismatch error", all(
		compliance(policyv1.NonCompliant),
		condition(sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec",
			`spec.subscription.source: Invalid value: "other-catalog": the subscription defaults could not be determined because `+
				"the catalog specified in the policy does not match what was found in the PackageManifest on the cluster"),
	))
}
