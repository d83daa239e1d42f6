package main

import (
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestDecodeNamesTheField checks that values a type decodes itself (durations,
// int-or-strings, times), which encoding/json reports without a field, are
// reported with their field.
func TestDecodeNamesTheField(t *testing.T) {
	cases := []struct {
		name, yaml, field string
		into              any
	}{
		{"duration", "apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rolloutStrategy:\n    progressive: {minSuccessTime: soon}\n",
			"spec.rolloutStrategy.progressive.minSuccessTime", &policyv1.Policy{}},
		{"int-or-string", "apiVersion: policy.open-cluster-management.io/v1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rolloutStrategy:\n    progressive: {maxConcurrency: true}\n",
			"spec.rolloutStrategy.progressive.maxConcurrency", &policyv1.Policy{}},
		{"in a list", "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p}\nspec:\n  tolerations:\n  - {key: a}\n  - {key: b, tolerationSeconds: later}\n",
			"spec.tolerations[1].tolerationSeconds", &clusterv1beta1.Placement{}},
		{"time", "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, creationTimestamp: yesterday}\n",
			"metadata.creationTimestamp", &clusterv1beta1.Placement{}},
		{"map key with dots", "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p, labels: {a.b/c: [1]}}\n",
			"metadata.labels[a.b/c]", &clusterv1beta1.Placement{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			item, err := fn.ParseKubeObject([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			r := decode(item, tc.into)
			if r == nil {
				t.Fatal("decoded")
			}
			if r.Field == nil || r.Field.Path != tc.field {
				t.Fatalf("result %+v names field %v, want %s", r, r.Field, tc.field)
			}
		})
	}
}
