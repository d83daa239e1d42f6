package manifesttest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestHubHasADisruptionBudget: manifests/hub keeps at least one hub replica
// through voluntary disruptions, and no more than the Deployment runs.
func TestHubHasADisruptionBudget(t *testing.T) {
	reader := yaml.NewYAMLReader(bufioReader(kustomizeBuild(t, "manifests/hub")))
	var deployment *appsv1.Deployment
	var budgets []policyv1.PodDisruptionBudget
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := sigsyaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Deployment":
			deployment = &appsv1.Deployment{}
			if err := sigsyaml.UnmarshalStrict(doc, deployment); err != nil {
				t.Fatal(err)
			}
		case "PodDisruptionBudget":
			var pdb policyv1.PodDisruptionBudget
			if err := sigsyaml.UnmarshalStrict(doc, &pdb); err != nil {
				t.Fatal(err)
			}
			budgets = append(budgets, pdb)
		}
	}
	if deployment == nil || len(budgets) != 1 {
		t.Fatalf("want the hub Deployment and one PodDisruptionBudget, got %v and %d", deployment != nil, len(budgets))
	}
	pdb := budgets[0]
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Namespace != deployment.Namespace || !selector.Matches(labels.Set(deployment.Spec.Template.Labels)) {
		t.Errorf("the budget (%s, %v) does not select the hub's pods (%s, %v)", pdb.Namespace, selector, deployment.Namespace, deployment.Spec.Template.Labels)
	}
	replicas := int32(1)
	if deployment.Spec.Replicas != nil {
		replicas = *deployment.Spec.Replicas
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || int32(pdb.Spec.MinAvailable.IntValue()) >= replicas {
		t.Errorf("minAvailable %v: want at least 1 and fewer than the %d replicas, so a drain can proceed", pdb.Spec.MinAvailable, replicas)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
