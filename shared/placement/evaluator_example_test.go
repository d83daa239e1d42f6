package placement_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// policyConfigMap is a placement-policy ConfigMap of the given language holding
// one policy.
func policyConfigMap(name string, language placement.Language, key, text string) corev1.ConfigMap {
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: placement.Namespace, Name: name,
			Labels: map[string]string{"fleetpolicy.io/placement-policy": string(language)},
		},
		Data: map[string]string{key: text},
	}
}

var fleet = []placement.Cluster{
	{Name: "eu-dublin", Labels: map[string]string{"jurisdiction": "eu"}},
	{Name: "eu-paris", Labels: map[string]string{"jurisdiction": "eu"}},
	{Name: "us-virginia", Labels: map[string]string{"jurisdiction": "us"}},
}

// A Rego placement policy: a root Policy annotated as needing EU jurisdiction
// may go only to EU clusters. Explain says why each cluster is in or out.
func ExampleEvaluator_Explain() {
	const rego = `package fleetpolicy.placement

wants_eu if input.metadata.annotations["fleetpolicy.io/eu-jurisdiction-required"] == "true"

eu_clusters contains name if {
	some name, c in data.clusters
	c.labels.jurisdiction == "eu"
}

annotations["placement.fleetpolicy.io/clusters"] := concat(",", sort([n | some n in eu_clusters])) if wants_eu

excluded[name] := "not in the EU jurisdiction" if {
	wants_eu
	some name, _ in data.clusters
	not name in eu_clusters
}
`
	ctx := context.Background()
	e := placement.New()
	for _, s := range e.Load(ctx, []corev1.ConfigMap{policyConfigMap("eu-only", placement.Rego, "eu.rego", rego)}) {
		fmt.Println(s.ConfigMap, s.Annotation())
	}
	if err := e.SetClusters(ctx, fleet); err != nil {
		fmt.Println(err)
		return
	}
	policy := map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1", "kind": "Policy",
		"metadata": map[string]any{"name": "payments", "namespace": "policies",
			"annotations": map[string]any{"fleetpolicy.io/eu-jurisdiction-required": "true"}},
	}
	res, err := e.Explain(ctx, policy)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Annotations[placement.ClustersAnnotation])
	for _, d := range res.Clusters {
		fmt.Println(d.Cluster, d.Allowed, d.Reasons)
	}
	// Output:
	// eu-only {"status":"ok"}
	// eu-dublin,eu-paris
	// eu-dublin true [fleetpolicy-placement/eu-only[eu.rego]: selects the cluster]
	// eu-paris true [fleetpolicy-placement/eu-only[eu.rego]: selects the cluster]
	// us-virginia false [fleetpolicy-placement/eu-only[eu.rego]: not in the EU jurisdiction]
}

// The same rule as a CEL placement policy, with an error that denies a
// resource no cluster can take.
func ExampleEvaluator_Evaluate() {
	const cel = `
when: object.?metadata.?annotations[?"fleetpolicy.io/jurisdiction"].hasValue()
variables:
- name: wanted
  expression: object.metadata.annotations["fleetpolicy.io/jurisdiction"]
match:
- expression: cluster.labels[?"jurisdiction"].orValue("") == variables.wanted
  messageExpression: '"not in jurisdiction " + variables.wanted'
errors:
- expression: size(selected) == 0
  messageExpression: '"no cluster is in jurisdiction " + variables.wanted'
`
	ctx := context.Background()
	e := placement.New()
	e.Load(ctx, []corev1.ConfigMap{policyConfigMap("jurisdiction", placement.CEL, "jurisdiction.yaml", cel)})
	if err := e.SetClusters(ctx, fleet); err != nil {
		fmt.Println(err)
		return
	}
	for _, want := range []string{"us", "ap"} {
		res, err := e.Evaluate(ctx, map[string]any{
			"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
			"metadata": map[string]any{"name": "payments", "namespace": "policies",
				"annotations": map[string]any{"fleetpolicy.io/jurisdiction": want}},
		})
		fmt.Printf("%s: clusters=%q denied=%v %v %v\n", want, res.Annotations[placement.ClustersAnnotation], res.Denied(), res.Errors, err)
	}
	// Output:
	// us: clusters="us-virginia" denied=false [] <nil>
	// ap: clusters="" denied=true [fleetpolicy-placement/jurisdiction[jurisdiction.yaml]: no cluster is in jurisdiction ap] <nil>
}
