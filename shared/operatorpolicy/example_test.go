package operatorpolicy_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// An OperatorPolicy as written for OCM, which leaves the subscription's
// channel, catalog and namespace to the cluster.
const ocmOperatorPolicy = `
apiVersion: policy.open-cluster-management.io/v1beta1
kind: OperatorPolicy
metadata:
  name: install-strimzi
  namespace: prod-east
spec:
  remediationAction: enforce
  severity: medium
  complianceType: musthave
  subscription:
    name: strimzi-kafka-operator
  upgradeApproval: None
  versions:
  - strimzi-cluster-operator.v0.35.0
`

func parse(doc string) *v1beta1.OperatorPolicy {
	op := &v1beta1.OperatorPolicy{}
	if err := yaml.UnmarshalStrict([]byte(doc), op); err != nil {
		panic(err)
	}
	return op
}

// Normalize reads either spelling of an OperatorPolicy into one Policy with
// every default spelled out.
func ExampleNormalize() {
	p, err := operatorpolicy.Normalize(parse(ocmOperatorPolicy))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Ref(), "enforce:", p.Enforce, "remove:", p.Remove, "on deletion:", p.OnDeletion)
	fmt.Printf("subscription: %+v\n", p.Subscription)
	fmt.Printf("approval: %s, allowed: %+v\n", p.Approval, p.Allowed)
	fmt.Println("needs the cluster's defaults:", operatorpolicy.NeedsSubscriptionDefaults(p))

	bad := parse(ocmOperatorPolicy)
	bad.Spec.RemediationAction = "enforce-later"
	_, err = operatorpolicy.Normalize(bad)
	fmt.Println(err)
	// Output:
	// prod-east/install-strimzi enforce: true remove: false on deletion: Never
	// subscription: {Package:strimzi-kafka-operator Namespace: Channel: Source: SourceNamespace: StartingCSV: Config:<nil>}
	// approval: Manual, allowed: [strimzi-cluster-operator.v0.35.0]
	// needs the cluster's defaults: true
	// OperatorPolicy prod-east/install-strimzi: spec.remediationAction: Unsupported value: "enforce-later": supported values: "inform", "enforce", "InformOnly"
}

// ApplySubscriptionDefaults fills what the policy leaves unset from the
// cluster's PackageManifest, as OCM's config-policy-controller does.
func ExampleApplySubscriptionDefaults() {
	p, err := operatorpolicy.Normalize(parse(ocmOperatorPolicy))
	if err != nil {
		fmt.Println(err)
		return
	}
	manifest := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "packages.operators.coreos.com/v1", "kind": "PackageManifest",
		"metadata": map[string]any{"name": "strimzi-kafka-operator", "namespace": "openshift-marketplace"},
		"status": map[string]any{
			"catalogSource": "community-operators", "catalogSourceNamespace": "openshift-marketplace",
			"defaultChannel": "stable",
			"channels": []any{map[string]any{
				"name": "stable",
				"currentCSVDesc": map[string]any{
					"annotations": map[string]any{"operatorframework.io/suggested-namespace": "strimzi"},
				},
			}},
		},
	}}
	p, err = operatorpolicy.ApplySubscriptionDefaults(p, operatorpolicy.SubscriptionDefaultsFrom{PackageManifest: manifest})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("subscription: %+v\n", p.Subscription)

	// Without a PackageManifest, a Subscription to adopt or a default namespace,
	// the unset fields are named.
	p, _ = operatorpolicy.Normalize(parse(ocmOperatorPolicy))
	_, err = operatorpolicy.ApplySubscriptionDefaults(p, operatorpolicy.SubscriptionDefaultsFrom{})
	fmt.Println(err)
	// Output:
	// subscription: {Package:strimzi-kafka-operator Namespace:strimzi Channel:stable Source:community-operators SourceNamespace:openshift-marketplace StartingCSV: Config:<nil>}
	// OperatorPolicy prod-east/install-strimzi: spec.subscription: Invalid value: the subscription defaults could not be determined because the PackageManifest was not found (unset: namespace, channel, source, sourceNamespace)
}
