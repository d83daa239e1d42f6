package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	fleetpolicyv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
)

// fullPlan sets every field of a RolloutPlan, with values YAML could misread
// (a name that looks like a boolean, one that looks like a number).
func fullPlan(waves int) *fleetpolicyv1alpha1.RolloutPlan {
	plan := &fleetpolicyv1alpha1.RolloutPlan{
		TypeMeta: metav1.TypeMeta{APIVersion: fleetpolicyv1alpha1.GroupVersion.String(), Kind: fleetpolicyv1alpha1.RolloutPlanKind},
		ObjectMeta: metav1.ObjectMeta{Name: "true", Namespace: "0123",
			Annotations: map[string]string{"config.kubernetes.io/local-config": "true", "b": "yes"}},
		Spec: fleetpolicyv1alpha1.RolloutPlanSpec{
			PolicyRef: fleetpolicyv1alpha1.PolicyRef{Name: "true", Namespace: "0123"},
			Strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
				RolloutConfig:           clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: time.Minute}, ProgressDeadline: "None", MaxFailures: intstr.FromString("5%")},
				MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: []clusterv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}},
				MaxConcurrency:          intstr.FromInt32(1),
			}},
			Clusters: []fleetpolicyv1alpha1.PlannedCluster{
				{Name: "null", RemediationAction: "enforce", EnforcedBy: []string{"b1", "on"}, Wave: new(int32)},
				{Name: "1e3", RemediationAction: "inform"},
				{Name: "plain"},
			},
			Waves: []fleetpolicyv1alpha1.Wave{},
		},
	}
	for i := range waves {
		plan.Spec.Waves = append(plan.Spec.Waves, fleetpolicyv1alpha1.Wave{
			Index: int32(i), Clusters: []string{fmt.Sprintf("c%d", i), "no"}, Mandatory: i == 0,
			DecisionGroups: []fleetpolicyv1alpha1.DecisionGroupRef{{Placement: "p", GroupName: "canary", GroupIndex: int32(i)}, {GroupIndex: 1}},
			NotBefore:      metav1.Duration{Duration: time.Duration(i) * time.Minute},
		})
	}
	return plan
}

// TestToKubeObjectRoundTrips checks that the item written for a plan reads back
// as the same plan, with no field the type does not know: the nodes built by
// hand follow the API type.
func TestToKubeObjectRoundTrips(t *testing.T) {
	want := fullPlan(3)
	obj, err := toKubeObject(want)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := obj.CopyToResourceNode().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got := &fleetpolicyv1alpha1.RolloutPlan{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(got); err != nil {
		t.Fatalf("%v\n%s", err, obj.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v\n%s", got, want, obj.String())
	}
}

// TestWaveTableIsCompact checks that the wave table lists at most
// maxTableWaves rows and names the last wave.
func TestWaveTableIsCompact(t *testing.T) {
	table := waveTable(fullPlan(1000))
	lines := strings.Split(table, "\n")
	if want := 2 + maxTableWaves; len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, table)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "989 more waves, the last (999) not before 16h39m0s") {
		t.Fatalf("last line %q", last)
	}
	if !strings.Contains(lines[2], "2 (c0, no)") || !strings.Contains(lines[2], "(mandatory)") {
		t.Fatalf("first wave %q", lines[2])
	}
}
