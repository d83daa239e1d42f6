package configpolicy

import (
	"testing"
	"time"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestDecide(t *testing.T) {
	match := Comparison{Matches: true}
	differ := Comparison{Mismatches: []string{"data.k"}}
	statusOnly := Comparison{Mismatches: []string{"status.phase"}}
	both := Comparison{Mismatches: []string{"data.k", "status.phase"}}
	cases := []struct {
		name    string
		ct      policyv1.ComplianceType
		exists  bool
		cmp     Comparison
		enforce bool
		want    Verdict
	}{
		{"musthave, missing, inform", policyv1.MustHave, false, Comparison{}, false, Verdict{Reason: ReasonNotFound}},
		{"musthave, missing, enforce", policyv1.MustHave, false, Comparison{}, true, Verdict{Compliant: true, Action: ActionCreate, Reason: ReasonCreated}},
		{"musthave, matches, inform", policyv1.MustHave, true, match, false, Verdict{Compliant: true, Reason: ReasonFoundAsSpecified}},
		{"musthave, matches, enforce writes nothing", policyv1.MustHave, true, match, true, Verdict{Compliant: true, Reason: ReasonFoundAsSpecified}},
		{"musthave, differs, inform", policyv1.MustHave, true, differ, false, Verdict{Reason: ReasonNotAsSpecified}},
		{"mustonlyhave, differs, enforce", policyv1.MustOnlyHave, true, differ, true, Verdict{Compliant: true, Action: ActionUpdate, Reason: ReasonUpdated}},
		{"status differs, enforce cannot fix", policyv1.MustHave, true, statusOnly, true, Verdict{Reason: ReasonStatusNotAsExpected}},
		{"status differs, inform", policyv1.MustHave, true, statusOnly, false, Verdict{Reason: ReasonNotAsSpecified}},
		{"spec and status differ, enforce updates but stays noncompliant", policyv1.MustHave, true, both, true,
			Verdict{Action: ActionUpdate, Reason: ReasonStatusNotAsExpected}},
		{"mustnothave, missing", policyv1.MustNotHave, false, Comparison{}, false, Verdict{Compliant: true, Reason: ReasonMissingAsExpected}},
		{"mustnothave, exists, inform", policyv1.MustNotHave, true, differ, false, Verdict{Reason: ReasonFoundButShouldNot}},
		{"mustnothave, exists, enforce", policyv1.MustNotHave, true, match, true, Verdict{Compliant: true, Action: ActionDelete, Reason: ReasonDeleted}},
	}
	for _, tc := range cases {
		if got := Decide(tc.ct, tc.exists, tc.cmp, tc.enforce); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		name    string
		results []Result
		want    string
	}{
		{"nothing", nil, ""},
		{"one namespaced object", []Result{{Resource: "configmaps", Namespace: "default", Name: "a", Reason: ReasonFoundAsSpecified}},
			"configmaps [a] found as specified in namespace default"},
		{"one cluster-scoped object", []Result{{Resource: "namespaces", Name: "n", Reason: ReasonNotFound}},
			"namespaces [n] not found"},
		{"names of one namespace and reason together, only the violations when there are any", []Result{
			{Resource: "configmaps", Namespace: "x", Name: "a", Reason: ReasonNotFound},
			{Resource: "configmaps", Namespace: "x", Name: "b", Reason: ReasonNotFound},
			{Resource: "configmaps", Namespace: "x", Name: "c", Reason: ReasonFoundAsSpecified, Compliant: true},
		}, "configmaps [a, b] not found in namespace x"},
		{"every compliant result when all are", []Result{
			{Resource: "configmaps", Namespace: "x", Name: "c", Reason: ReasonFoundAsSpecified, Compliant: true},
			{Resource: "configmaps", Namespace: "x", Name: "d", Reason: ReasonCreated, Compliant: true},
		}, "configmaps [c] found as specified in namespace x; configmaps [d] was created successfully in namespace x"},
		{"the same names in several namespaces: one namespace before several, as OCM sorts its message templates", []Result{
			{Resource: "configmaps", Namespace: "x", Name: "a", Reason: ReasonNotFound},
			{Resource: "configmaps", Namespace: "y", Name: "a", Reason: ReasonNotFound},
			{Resource: "configmaps", Namespace: "z", Name: "b", Reason: ReasonNotFound},
		}, "configmaps [b] not found in namespace z; configmaps [a] not found in namespaces: x, y"},
		{"results without a name, in several namespaces", []Result{
			{Resource: "configmaps", Namespace: "x", Reason: ReasonMissingAsExpected, Compliant: true},
			{Resource: "configmaps", Namespace: "y", Reason: ReasonMissingAsExpected, Compliant: true},
		}, "configmaps missing as expected in namespaces: x, y"},
		{"a name repeated is listed once", []Result{
			{Resource: "secrets", Namespace: "x", Name: "a", Reason: ReasonCreated},
			{Resource: "secrets", Namespace: "x", Name: "a", Reason: ReasonCreated},
		}, "secrets [a] was created successfully in namespace x"},
		{"failures after the reasons, each object on its own in namespace and name order", []Result{
			{Resource: "configmaps", Namespace: "y", Name: "a", Reason: ReasonNotAsSpecified, Message: "configmaps [a] in namespace y cannot be updated"},
			{Resource: "configmaps", Namespace: "x", Name: "b", Reason: ReasonNotAsSpecified},
			{Resource: "configmaps", Namespace: "x", Name: "a", Reason: ReasonNotAsSpecified, Message: "configmaps [a] in namespace x cannot be updated"},
			{Resource: "configmaps", Namespace: "y", Name: "b", Reason: ReasonNotAsSpecified},
		}, "configmaps [b] found but not as specified in namespaces: x, y; configmaps [a] in namespace x cannot be updated; " +
			"configmaps [a] in namespace y cannot be updated"},
		{"compliant reasons in OCM's order, whatever the results' order", []Result{
			{Resource: "configmaps", Namespace: "x", Name: "u", Reason: ReasonUpdated, Compliant: true},
			{Resource: "configmaps", Namespace: "x", Name: "c", Reason: ReasonCreated, Compliant: true},
			{Resource: "configmaps", Namespace: "x", Name: "f", Reason: ReasonFoundAsSpecified, Compliant: true},
		}, "configmaps [f] found as specified in namespace x; configmaps [c] was created successfully in namespace x; " +
			"configmaps [u] was updated successfully in namespace x"},
		{"violations in OCM's order: not found before not as specified", []Result{
			{Resource: "configmaps", Namespace: "x", Name: "m", Reason: ReasonNotAsSpecified},
			{Resource: "configmaps", Namespace: "y", Name: "m", Reason: ReasonNotFound},
		}, "configmaps [m] not found in namespace y; configmaps [m] found but not as specified in namespace x"},
		{"deleted before missing as expected", []Result{
			{Resource: "configmaps", Namespace: "y", Name: "a", Reason: ReasonMissingAsExpected, Compliant: true},
			{Resource: "configmaps", Namespace: "x", Name: "a", Reason: ReasonDeleted, Compliant: true},
		}, "configmaps [a] was deleted successfully in namespace x; configmaps [a] missing as expected in namespace y"},
		{"names sorted, and grouped by the namespaces each is in (an objectSelector's objects)", []Result{
			{Resource: "configmaps", Namespace: "y", Name: "b", Reason: ReasonNotAsSpecified},
			{Resource: "configmaps", Namespace: "y", Name: "a", Reason: ReasonNotAsSpecified},
			{Resource: "configmaps", Namespace: "x", Name: "a", Reason: ReasonNotAsSpecified},
			{Resource: "configmaps", Namespace: "z", Name: "c", Reason: ReasonNotAsSpecified},
			{Resource: "configmaps", Namespace: "y", Name: "d", Reason: ReasonNotAsSpecified},
		}, "configmaps [b, d] found but not as specified in namespace y; configmaps [c] found but not as specified in namespace z; " +
			"configmaps [a] found but not as specified in namespaces: x, y"},
		{"an unnamed template's objects of one namespace are one name", []Result{
			{Resource: "configmaps", Namespace: "y", Name: "b", Unnamed: true, Reason: ReasonFoundAsSpecified, Compliant: true},
			{Resource: "configmaps", Namespace: "y", Name: "a", Unnamed: true, Reason: ReasonFoundAsSpecified, Compliant: true},
			{Resource: "configmaps", Namespace: "x", Name: "a", Unnamed: true, Reason: ReasonFoundAsSpecified, Compliant: true},
			{Resource: "configmaps", Namespace: "z", Name: "a", Unnamed: true, Reason: ReasonFoundAsSpecified, Compliant: true},
			{Resource: "configmaps", Namespace: "w", Name: "b", Unnamed: true, Reason: ReasonFoundAsSpecified, Compliant: true},
			{Resource: "configmaps", Namespace: "w", Name: "a", Unnamed: true, Reason: ReasonFoundAsSpecified, Compliant: true},
		}, "configmaps [a, b] found as specified in namespaces: w, y; configmaps [a] found as specified in namespaces: x, z"},
		{"failures sorted by OCM's reason for them (creation, deletion, update, api error), then by object", []Result{
			{Resource: "configmaps", Namespace: "x", Name: "r", Reason: "cannot be read: boom"},
			{Resource: "configmaps", Namespace: "x", Name: "u2", Reason: "cannot be updated: conflict"},
			{Resource: "configmaps", Namespace: "x", Name: "u1", Reason: ReasonNotAsSpecified, Message: "configmaps [u1] in namespace x is immutable"},
			{Resource: "configmaps", Namespace: "x", Name: "c", Reason: "cannot be created: denied"},
			{Resource: "configmaps", Namespace: "x", Name: "n", Reason: ReasonNotFound},
		}, "configmaps [n] not found in namespace x; configmaps [c] cannot be created: denied in namespace x; " +
			"configmaps [u1] in namespace x is immutable; configmaps [u2] cannot be updated: conflict in namespace x; " +
			"configmaps [r] cannot be read: boom in namespace x"},
		{"cluster-scoped objects: no namespace, names sorted", []Result{
			{Resource: "namespaces", Namespace: "", Name: "b", Reason: ReasonNotFound},
			{Resource: "namespaces", Namespace: "", Name: "a", Reason: ReasonNotFound},
		}, "namespaces [a, b] not found"},
	}
	for _, tc := range cases {
		if got := Describe(tc.results); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestComplianceMessage(t *testing.T) {
	if got := ComplianceMessage(true, []string{"configmaps [a] found as specified in namespace x"}); got != "Compliant; notification - configmaps [a] found as specified in namespace x" {
		t.Error(got)
	}
	if got := ComplianceMessage(false, []string{"a", "b"}); got != "NonCompliant; violation - a; b" {
		t.Error(got)
	}
}

func TestRelatedReason(t *testing.T) {
	for reason, want := range map[Reason]string{
		ReasonFoundAsSpecified:  "Resource found as expected",
		ReasonNotFound:          "Resource not found but should exist",
		ReasonNotAsSpecified:    "Resource found but does not match",
		ReasonMissingAsExpected: "Resource not found as expected",
		ReasonFoundButShouldNot: "Resource found but should not exist",
		ReasonCreated:           "K8s creation success",
		ReasonUpdated:           "K8s update success",
		ReasonDeleted:           "K8s deletion success",
		"cannot be read: boom":  "cannot be read: boom",
	} {
		if got := reason.Related(); got != want {
			t.Errorf("%q.Related() = %q, want %q (OCM's wording)", reason, got, want)
		}
	}
}

func TestDetail(t *testing.T) {
	at := time.Unix(1700000000, 0)
	for _, tt := range []struct {
		compliant       bool
		state, typ, msg string
	}{
		{true, "Compliant", "notification", "Compliant; notification - a; b"},
		{false, "NonCompliant", "violation", "NonCompliant; violation - a; b"},
	} {
		d := Detail(tt.compliant, "R", "m", at)
		if string(d.ComplianceState) != tt.state || len(d.Conditions) != 1 || d.Conditions[0].Type != tt.typ ||
			d.Conditions[0].Reason != "R" || d.Conditions[0].Message != "m" || !d.Conditions[0].LastTransitionTime.Time.Equal(at) {
			t.Errorf("Detail(%v) = %+v", tt.compliant, d)
		}
		if got := ComplianceMessage(tt.compliant, []string{"a", "b"}); got != tt.msg {
			t.Errorf("ComplianceMessage(%v) = %q, want %q", tt.compliant, got, tt.msg)
		}
	}
}
