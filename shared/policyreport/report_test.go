package policyreport

import (
	"reflect"
	"testing"
	"time"

	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

func TestResultOf(t *testing.T) {
	for _, tc := range []struct {
		state policyv1.ComplianceState
		want  openreportsv1alpha1.Result
		ok    bool
	}{
		{policyv1.Compliant, "pass", true},
		{policyv1.NonCompliant, "fail", true},
		{policyv1.Pending, "skip", true},
		{"", "", false},
		{policyv1.Terminating, "", false},
	} {
		if got, ok := ResultOf(tc.state); got != tc.want || ok != tc.ok {
			t.Errorf("ResultOf(%q) = %q, %v; want %q, %v", tc.state, got, ok, tc.want, tc.ok)
		}
	}
}

// root is a root policy whose status has one entry per cluster: name -> compliance.
func root(ns, name string, annotations map[string]string, clusters map[string]policyv1.ComplianceState) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}}
	for cl, state := range clusters {
		p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: cl, ClusterNamespace: cl, ComplianceState: state})
	}
	return p
}

func TestForCluster(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	earlier := metav1.Timestamp{Seconds: now.Add(-time.Hour).Unix()}
	stamp := metav1.Timestamp{Seconds: now.Unix()}
	annotated := map[string]string{annotationStandards: "NIST SP 800-53", annotationCategories: "CM Configuration Management", annotationControls: "CM-2"}
	subject := func(ns, name string) []corev1.ObjectReference {
		return []corev1.ObjectReference{{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Namespace: "c1", Name: replication.Name(ns, name)}}
	}
	replica := root("c1", "policies.x", nil, map[string]policyv1.ComplianceState{"c1": policyv1.NonCompliant})
	replica.Labels = map[string]string{replication.LabelRootPolicy: "policies.x"}
	rolled := root("policies", "rolled", nil, map[string]policyv1.ComplianceState{"c1": policyv1.Compliant})
	rolled.Status.Status[0].RolloutStatus = policyv1.RolloutSucceeded

	for _, tc := range []struct {
		name        string
		roots       []*policyv1.Policy
		previous    []openreportsv1alpha1.ReportResult
		want        []openreportsv1alpha1.ReportResult
		wantSummary openreportsv1alpha1.ReportSummary
	}{
		{name: "no root: no result"},
		{
			name: "one result per root with an entry for the cluster, by policy name; others, replicas and unreported skipped",
			roots: []*policyv1.Policy{
				root("policies", "b-fails", nil, map[string]policyv1.ComplianceState{"c1": policyv1.NonCompliant, "c2": policyv1.Compliant}),
				root("policies", "a-passes", annotated, map[string]policyv1.ComplianceState{"c1": policyv1.Compliant}),
				root("other", "waits", nil, map[string]policyv1.ComplianceState{"c1": policyv1.Pending}),
				root("policies", "elsewhere", nil, map[string]policyv1.ComplianceState{"c2": policyv1.NonCompliant}),
				root("policies", "unreported", nil, map[string]policyv1.ComplianceState{"c1": ""}),
				replica, nil,
			},
			want: []openreportsv1alpha1.ReportResult{
				{Source: Source, Policy: "other/waits", Result: "skip", Timestamp: stamp, Subjects: subject("other", "waits"),
					Description: "pending on c1: not evaluated until its dependencies are met"},
				{Source: Source, Policy: "policies/a-passes", Result: "pass", Timestamp: stamp, Subjects: subject("policies", "a-passes"),
					Category: "CM Configuration Management", Description: "compliant on c1",
					Properties: map[string]string{"standards": "NIST SP 800-53", "controls": "CM-2"}},
				{Source: Source, Policy: "policies/b-fails", Result: "fail", Timestamp: stamp, Subjects: subject("policies", "b-fails"),
					Description: "not compliant on c1"},
			},
			wantSummary: openreportsv1alpha1.ReportSummary{Pass: 1, Fail: 1, Skip: 1},
		},
		{
			name:  "the rollout status is a property",
			roots: []*policyv1.Policy{rolled},
			want: []openreportsv1alpha1.ReportResult{{Source: Source, Policy: "policies/rolled", Result: "pass", Timestamp: stamp,
				Subjects: subject("policies", "rolled"), Description: "compliant on c1", Properties: map[string]string{"rolloutStatus": "Succeeded"}}},
			wantSummary: openreportsv1alpha1.ReportSummary{Pass: 1},
		},
		{
			name: "an unchanged result keeps its timestamp, a changed one is stamped now",
			roots: []*policyv1.Policy{
				root("policies", "same", nil, map[string]policyv1.ComplianceState{"c1": policyv1.Compliant}),
				root("policies", "flipped", nil, map[string]policyv1.ComplianceState{"c1": policyv1.NonCompliant}),
			},
			previous: []openreportsv1alpha1.ReportResult{
				{Policy: "policies/same", Result: "pass", Description: "compliant on c1", Timestamp: earlier},
				{Policy: "policies/flipped", Result: "pass", Description: "compliant on c1", Timestamp: earlier},
				{Policy: "policies/gone", Result: "fail", Description: "not compliant on c1", Timestamp: earlier},
			},
			want: []openreportsv1alpha1.ReportResult{
				{Source: Source, Policy: "policies/flipped", Result: "fail", Timestamp: stamp, Subjects: subject("policies", "flipped"), Description: "not compliant on c1"},
				{Source: Source, Policy: "policies/same", Result: "pass", Timestamp: earlier, Subjects: subject("policies", "same"), Description: "compliant on c1"},
			},
			wantSummary: openreportsv1alpha1.ReportSummary{Pass: 1, Fail: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var previous *openreportsv1alpha1.Report
			if tc.previous != nil {
				previous = &openreportsv1alpha1.Report{Results: tc.previous}
			}
			got := ForCluster("c1", tc.roots, previous, now)
			if got.Name != Name || got.Namespace != "c1" || got.Labels[ManagedByLabel] != Source || got.Source != Source ||
				got.Scope == nil || got.Scope.Kind != "ManagedCluster" || got.Scope.Name != "c1" || got.Kind != "Report" {
				t.Errorf("report metadata, source or scope: %+v %+v", got.ObjectMeta, got.Scope)
			}
			if !reflect.DeepEqual(got.Results, tc.want) {
				t.Errorf("results:\n got %+v\nwant %+v", got.Results, tc.want)
			}
			if got.Summary != tc.wantSummary {
				t.Errorf("summary %+v, want %+v", got.Summary, tc.wantSummary)
			}
			if again := ForCluster("c1", tc.roots, got, now.Add(time.Minute)); !Equal(got, again) {
				t.Errorf("computed again a minute later from the same input, the report differs: %+v", again.Results)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	base := ForCluster("c1", []*policyv1.Policy{root("policies", "p", nil, map[string]policyv1.ComplianceState{"c1": policyv1.Compliant})}, nil, now)
	for _, tc := range []struct {
		name  string
		edit  func(r *openreportsv1alpha1.Report)
		equal bool
	}{
		{"identical", func(*openreportsv1alpha1.Report) {}, true},
		{"another's label", func(r *openreportsv1alpha1.Report) { r.Labels["team"] = "a" }, true},
		{"a result changed", func(r *openreportsv1alpha1.Report) { r.Results[0].Result = "fail" }, false},
		{"a result's timestamp", func(r *openreportsv1alpha1.Report) { r.Results[0].Timestamp.Seconds++ }, false},
		{"the summary", func(r *openreportsv1alpha1.Report) { r.Summary.Pass = 2 }, false},
		{"the source", func(r *openreportsv1alpha1.Report) { r.Source = "kyverno" }, false},
		{"the scope", func(r *openreportsv1alpha1.Report) { r.Scope = nil }, false},
		{"not managed by fleetpolicy", func(r *openreportsv1alpha1.Report) { delete(r.Labels, ManagedByLabel) }, false},
	} {
		stored := base.DeepCopy()
		tc.edit(stored)
		if got := Equal(stored, base); got != tc.equal {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.equal)
		}
	}
}
