package compliance

import (
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

const (
	c  = policyv1.Compliant
	nc = policyv1.NonCompliant
	p  = policyv1.Pending
)

func TestOfTemplate(t *testing.T) {
	tests := []struct {
		state, want policyv1.ComplianceState
	}{
		{"", ""},
		{c, c},
		{p, p},
		{nc, nc},
		{policyv1.Terminating, nc},
		{"compliant", c},
		{"noncompliant", nc},
		{"Unknown", nc},
	}
	for _, tt := range tests {
		if got := OfTemplate(tt.state); got != tt.want {
			t.Errorf("OfTemplate(%q) = %q, want %q", tt.state, got, tt.want)
		}
	}
}

func TestAggregate(t *testing.T) {
	tests := []struct {
		name   string
		states []policyv1.ComplianceState
		want   policyv1.ComplianceState
	}{
		{name: "no parts", states: nil, want: ""},
		{name: "all compliant", states: []policyv1.ComplianceState{c, c}, want: c},
		{name: "one compliant", states: []policyv1.ComplianceState{c}, want: c},
		{name: "noncompliant beats everything", states: []policyv1.ComplianceState{c, p, "", nc}, want: nc},
		{name: "noncompliant first", states: []policyv1.ComplianceState{nc, p, ""}, want: nc},
		{name: "pending beats unknown and compliant", states: []policyv1.ComplianceState{"", c, p}, want: p},
		{name: "unknown beats compliant", states: []policyv1.ComplianceState{c, "", c}, want: ""},
		{name: "unrecognised value is unknown", states: []policyv1.ComplianceState{c, "compliant"}, want: ""},
		{name: "only unknown", states: []policyv1.ComplianceState{""}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Aggregate(tt.states); got != tt.want {
				t.Errorf("Aggregate(%q) = %q, want %q", tt.states, got, tt.want)
			}
		})
	}
}

func TestPolicySet(t *testing.T) {
	policy := func(state policyv1.ComplianceState, disabled bool) *policyv1.Policy {
		return &policyv1.Policy{
			Spec:   policyv1.PolicySpec{Disabled: disabled},
			Status: policyv1.PolicyStatus{ComplianceState: state},
		}
	}
	set := func(members ...policyv1.NonEmptyString) *policyv1beta1.PolicySet {
		return &policyv1beta1.PolicySet{Spec: policyv1beta1.PolicySetSpec{Policies: members}}
	}
	policies := map[string]*policyv1.Policy{
		"ok":               policy(c, false),
		"ok-2":             policy(c, false),
		"bad":              policy(nc, false),
		"waiting":          policy(p, false),
		"new":              policy("", false),
		"disabled-bad":     policy(nc, true),
		"disabled-pending": policy(p, true),
		"odd":              policy("Terminating", false),
	}
	tests := []struct {
		name string
		set  *policyv1beta1.PolicySet
		want policyv1.ComplianceState
	}{
		{name: "nil set", set: nil, want: ""},
		{name: "no members", set: set(), want: ""},
		{name: "all compliant", set: set("ok", "ok-2"), want: c},
		{name: "noncompliant member", set: set("ok", "bad", "waiting"), want: nc},
		{name: "pending member", set: set("ok", "waiting"), want: p},
		{name: "noncompliant before pending", set: set("waiting", "bad"), want: nc},
		{name: "member without status is unknown", set: set("ok", "new"), want: ""},
		{name: "a member without status hides a pending one, as OCM's showCompliance", set: set("ok", "waiting", "new"), want: ""},
		{name: "a member without status hides a noncompliant one, as OCM's showCompliance", set: set("bad", "new"), want: ""},
		{name: "a member in an unknown state counts as without status", set: set("bad", "odd"), want: ""},
		{name: "disabled members are skipped", set: set("ok", "disabled-bad", "disabled-pending"), want: c},
		{name: "missing members are skipped", set: set("ok", "gone"), want: c},
		{name: "only skipped members", set: set("gone", "disabled-bad"), want: ""},
		{name: "duplicate member counted once", set: set("ok", "ok"), want: c},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PolicySet(tt.set, policies); got != tt.want {
				t.Errorf("PolicySet() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPolicySetMessage(t *testing.T) {
	root := func(state policyv1.ComplianceState, disabled bool) *policyv1.Policy {
		p := &policyv1.Policy{}
		p.Spec.Disabled, p.Status.ComplianceState = disabled, state
		return p
	}
	set := func(members ...string) *policyv1beta1.PolicySet {
		s := &policyv1beta1.PolicySet{}
		for _, m := range members {
			s.Spec.Policies = append(s.Spec.Policies, policyv1.NonEmptyString(m))
		}
		return s
	}
	policies := map[string]*policyv1.Policy{
		"ok": root(policyv1.Compliant, false), "bad": root(policyv1.NonCompliant, false),
		"waiting": root(policyv1.Pending, false), "off": root(policyv1.Compliant, true), "new": root("", false),
		"odd": root("Terminating", false),
	}
	for _, tt := range []struct {
		name string
		set  *policyv1beta1.PolicySet
		want string
	}{
		{"no set", nil, ""},
		{"no members", set(), ""},
		{"every member reports", set("ok", "bad"), "All policies are reporting status"},
		{"OCM's order whatever the members'", set("gone", "new", "off", "waiting", "ok"),
			"Policies awaiting pending dependencies: waiting; Disabled policies: off; " +
				"No status provided while awaiting policy status: new; Deleted policies: gone"},
		{"several of a kind", set("gone", "ok", "also-gone"), "Deleted policies: gone, also-gone"},
		{"a state OCM does not count is no status", set("odd", "bad"), "No status provided while awaiting policy status: odd"},
	} {
		if got := PolicySetMessage(tt.set, policies); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
