package placement

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The EU/PCI example, "apps that require EU jurisdiction go only to EU clusters
// with sufficient PCI compliance", as committed in examples/placement: the Rego
// policy and the CEL policy must each give exactly these results over the
// example inventory (eu-dublin PCI 2, eu-frankfurt PCI 3, eu-paris PCI 1,
// us-virginia PCI 3, ap-tokyo no jurisdiction and no claim).
func TestEUPCIExample(t *testing.T) {
	const (
		notEU    = "not in the EU jurisdiction (label jurisdiction is not eu)"
		badLevel = "the requested PCI compliance level is not a whole number"
	)
	apps := exampleResources(t)
	cases := []struct {
		name     string
		resource map[string]any
		// clusters is the ClustersAnnotation the policy sets; nil: not set.
		clusters *string
		errors   []string
		// excluded are the reasons for each cluster left out.
		excluded map[string][]string
	}{
		{name: "payments asks for EU and PCI 2", resource: apps["Policy/payments"], clusters: ptr("eu-dublin,eu-frankfurt"),
			excluded: map[string][]string{
				"ap-tokyo":    {"PCI compliance level none is below 2", notEU},
				"eu-paris":    {"PCI compliance level 1 is below 2"},
				"us-virginia": {notEU},
			}},
		{name: "the Placement asks as payments does", resource: apps["Placement/payments"], clusters: ptr("eu-dublin,eu-frankfurt"),
			excluded: map[string][]string{
				"ap-tokyo":    {"PCI compliance level none is below 2", notEU},
				"eu-paris":    {"PCI compliance level 1 is below 2"},
				"us-virginia": {notEU},
			}},
		{name: "audit-logs asks for EU only", resource: apps["Policy/audit-logs"], clusters: ptr("eu-dublin,eu-frankfurt,eu-paris"),
			excluded: map[string][]string{"ap-tokyo": {notEU}, "us-virginia": {notEU}}},
		{name: "monitoring asks for nothing", resource: apps["Policy/monitoring"]},
		{name: "a PCI level without EU jurisdiction is not the policy's business",
			resource: resource(map[string]string{"fleetpolicy.io/pci-compliance-level": "3"})},
		{name: "EU jurisdiction set to false", resource: resource(map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "false"})},
		{name: "no EU cluster is PCI 5: denied",
			resource: resource(map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "5"}),
			clusters: ptr(""), errors: []string{"no EU cluster has PCI compliance level 5 or higher"},
			excluded: map[string][]string{
				"ap-tokyo":     {"PCI compliance level none is below 5", notEU},
				"eu-dublin":    {"PCI compliance level 2 is below 5"},
				"eu-frankfurt": {"PCI compliance level 3 is below 5"},
				"eu-paris":     {"PCI compliance level 1 is below 5"},
				"us-virginia":  {"PCI compliance level 3 is below 5", notEU},
			}},
		{name: "a level that is not a number: denied",
			resource: resource(map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "high"}),
			clusters: ptr(""), errors: []string{`annotation fleetpolicy.io/pci-compliance-level is "high", want a whole number`},
			excluded: map[string][]string{
				"ap-tokyo":     {notEU, badLevel},
				"eu-dublin":    {badLevel},
				"eu-frankfurt": {badLevel},
				"eu-paris":     {badLevel},
				"us-virginia":  {notEU, badLevel},
			}},
		{name: "a resource without metadata", resource: map[string]any{"kind": "Policy"}},
	}
	for _, file := range []string{"policy-rego.yaml", "policy-cel.yaml"} {
		cm := exampleConfigMap(t, file)
		e := loaded(t, exampleClusters(t), cm)
		for _, tc := range cases {
			t.Run(file+"/"+tc.name, func(t *testing.T) {
				got, err := e.Explain(context.Background(), tc.resource)
				if err != nil {
					t.Fatal(err)
				}
				checkExampleResult(t, cm, got, tc.clusters, tc.errors, tc.excluded)
				plain, err := e.Evaluate(context.Background(), tc.resource)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(plain.Annotations, got.Annotations) || !reflect.DeepEqual(plain.Errors, got.Errors) || plain.Clusters != nil {
					t.Errorf("Evaluate = %+v, want Explain's annotations and errors without decisions %+v", plain, got)
				}
			})
		}
	}
}

func checkExampleResult(t *testing.T, cm corev1.ConfigMap, got Result, clusters *string, errors []string, excluded map[string][]string) {
	t.Helper()
	var key string
	for k := range cm.Data {
		key = k
	}
	policy := PolicyID{ConfigMap: cm.Name, Key: key}
	var wantAnnotations map[string]string
	if clusters != nil {
		wantAnnotations = map[string]string{ClustersAnnotation: *clusters}
	}
	if !reflect.DeepEqual(got.Annotations, wantAnnotations) {
		t.Errorf("annotations %v, want %v", got.Annotations, wantAnnotations)
	}
	var wantErrors []Message
	for _, msg := range errors {
		wantErrors = append(wantErrors, Message{Policy: policy, Text: msg})
	}
	if !reflect.DeepEqual(got.Errors, wantErrors) {
		t.Errorf("errors %v, want %v", got.Errors, wantErrors)
	}
	if got.Denied() != (len(errors) > 0) {
		t.Errorf("Denied() = %v", got.Denied())
	}
	for _, d := range got.Clusters {
		var want []Reason
		switch {
		case clusters == nil:
			want = []Reason{{Allowed: true, Message: "no placement policy restricts where the resource goes"}}
		case excluded[d.Cluster] == nil:
			want = []Reason{{Policy: policy, Allowed: true, Message: "selects the cluster"}}
		default:
			for _, msg := range excluded[d.Cluster] {
				want = append(want, Reason{Policy: policy, Message: msg})
			}
		}
		for _, msg := range errors {
			want = append(want, Reason{Policy: policy, Message: "denies the resource: " + msg})
		}
		wantAllowed := len(errors) == 0 && (clusters == nil || excluded[d.Cluster] == nil)
		if d.Allowed != wantAllowed || !reflect.DeepEqual(d.Reasons, want) {
			t.Errorf("cluster %s: allowed %v %v, want %v %v", d.Cluster, d.Allowed, d.Reasons, wantAllowed, want)
		}
	}
	if len(got.Clusters) != 5 {
		t.Errorf("%d decisions, want one per cluster of the inventory (5)", len(got.Clusters))
	}
}

func ptr(s string) *string { return &s }
