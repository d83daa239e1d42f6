package replication_test

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// A replica is named "<root namespace>.<root name>" and lives in the cluster's
// namespace on the hub.
func ExampleName() {
	fmt.Println(replication.Name("policies", "require-labels"))
	fmt.Println(replication.ValidateRootName("policies", "a-name-so-long-that-namespace-dot-name-no-longer-fits-in-a-label"))
	// Output:
	// policies.require-labels
	// the combined length of the policy namespace and name cannot exceed 62 characters (it is 72): the replicas' label policy.open-cluster-management.io/root-policy=policies.a-name-so-long-that-namespace-dot-name-no-longer-fits-in-a-label would exceed 63 characters, so the policy can never be propagated
}

// Build writes the replica of a root policy for one cluster, with the
// remediationAction binding and rollout decided for that cluster.
func ExampleBuild() {
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "require-labels", Generation: 4},
		Spec: policyv1.PolicySpec{
			RemediationAction: "inform",
			PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"require-labels"}}`),
			}}},
		},
	}
	replica := replication.Build(root, "prod-east", "enforce", nil)
	fmt.Println(replica.Namespace + "/" + replica.Name)
	fmt.Println(replica.Labels[replication.LabelClusterName], replica.Spec.RemediationAction)
	rootRef, _ := replication.RootOf(replica)
	fmt.Println("root:", rootRef, "is replica:", replication.IsReplica(replica), replication.IsReplica(root))
	// Output:
	// prod-east/policies.require-labels
	// prod-east enforce
	// root: policies/require-labels is replica: true false
}

// A template inherits the replica's remediationAction as the spoke syncs it:
// a Gatekeeper constraint gets the matching enforcementAction, an InformOnly
// template stays inform.
func ExampleInheritRemediationAction() {
	for _, doc := range []string{
		`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":{"remediationAction":"inform"}}`,
		`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":{"remediationAction":"InformOnly"}}`,
		`{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sRequiredLabels","spec":{}}`,
	} {
		var template map[string]any
		if err := json.Unmarshal([]byte(doc), &template); err != nil {
			panic(err)
		}
		replication.InheritRemediationAction("enforce", template)
		spec, _ := json.Marshal(template["spec"])
		fmt.Printf("%s: %s\n", template["kind"], spec)
	}
	// Output:
	// ConfigurationPolicy: {"remediationAction":"enforce"}
	// ConfigurationPolicy: {"remediationAction":"inform"}
	// K8sRequiredLabels: {"enforcementAction":"deny"}
}
