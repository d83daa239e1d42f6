package dependency

import (
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestObserve(t *testing.T) {
	cases := []struct {
		name   string
		object map[string]any
		want   Observation
	}{
		{"missing object", nil, Observation{}},
		{"no status", map[string]any{"kind": "Policy"}, Observation{Found: true}},
		{"status.compliant", map[string]any{"status": map[string]any{"compliant": "NonCompliant"}},
			Observation{Found: true, Compliance: policyv1.NonCompliant}},
		{"status.complianceState", map[string]any{"status": map[string]any{"complianceState": "Compliant"}},
			Observation{Found: true, Compliance: policyv1.Compliant}},
		{"status.compliant wins", map[string]any{"status": map[string]any{"compliant": "Pending", "complianceState": "Compliant"}},
			Observation{Found: true, Compliance: policyv1.Pending}},
		{"a status that is not an object", map[string]any{"status": "Compliant"}, Observation{Found: true}},
		{"a compliance that is not a string", map[string]any{"status": map[string]any{"compliant": true}}, Observation{Found: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Observe(tc.object); got != tc.want {
				t.Errorf("Observe = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	a := Requirement{Target: policyRef("ns.a"), Compliance: policyv1.Compliant, Field: dependencyField(0)}
	bar := Requirement{Target: configRef("bar"), Compliance: policyv1.NonCompliant, Field: extraDependencyField(0, 0)}
	seen := func(state policyv1.ComplianceState) Observation { return Observation{Found: true, Compliance: state} }
	cases := []struct {
		name           string
		reqs           []Requirement
		ignorePending  bool
		observed       map[Ref]Observation
		wantAllowed    bool
		wantCompliance policyv1.ComplianceState
		wantMessage    string
	}{
		{name: "no dependencies", wantAllowed: true},
		{name: "all met", reqs: []Requirement{a, bar},
			observed:    map[Ref]Observation{a.Target: seen(policyv1.Compliant), bar.Target: seen(policyv1.NonCompliant)},
			wantAllowed: true},
		{name: "wrong state", reqs: []Requirement{a},
			observed:       map[Ref]Observation{a.Target: seen(policyv1.NonCompliant)},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: waiting for Policy ns.a to be Compliant, it is NonCompliant"},
		{name: "missing object", reqs: []Requirement{a},
			observed:       map[Ref]Observation{a.Target: {}},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: waiting for Policy ns.a to be Compliant, it does not exist"},
		{name: "unobserved counts as missing", reqs: []Requirement{a},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: waiting for Policy ns.a to be Compliant, it does not exist"},
		{name: "missing status field", reqs: []Requirement{bar},
			observed:       map[Ref]Observation{bar.Target: {Found: true}},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: waiting for ConfigurationPolicy bar to be NonCompliant, it has no status.compliant or status.complianceState"},
		{name: "every unmet dependency is named", reqs: []Requirement{a, bar},
			observed:       map[Ref]Observation{a.Target: seen(policyv1.Pending), bar.Target: seen(policyv1.Compliant)},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: waiting for Policy ns.a to be Compliant, it is Pending; waiting for ConfigurationPolicy bar to be NonCompliant, it is Compliant"},
		{name: "only unmet dependencies are named", reqs: []Requirement{a, bar},
			observed:       map[Ref]Observation{a.Target: seen(policyv1.Compliant), bar.Target: seen(policyv1.Compliant)},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: waiting for ConfigurationPolicy bar to be NonCompliant, it is Compliant"},
		{name: "ignorePending reports Compliant", reqs: []Requirement{a}, ignorePending: true,
			wantCompliance: policyv1.Compliant,
			wantMessage:    "Dependencies were not satisfied: waiting for Policy ns.a to be Compliant, it does not exist but ignorePending is true"},
		{name: "ignorePending on an allowed template", ignorePending: true, wantAllowed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := Evaluate(tc.reqs, tc.ignorePending, tc.observed)
			if g.Allowed() != tc.wantAllowed {
				t.Errorf("Allowed() = %v, want %v", g.Allowed(), tc.wantAllowed)
			}
			if g.Compliance() != tc.wantCompliance {
				t.Errorf("Compliance() = %q, want %q", g.Compliance(), tc.wantCompliance)
			}
			if g.Message() != tc.wantMessage {
				t.Errorf("Message() =\n %q\nwant\n %q", g.Message(), tc.wantMessage)
			}
		})
	}
}

func TestPolicyPending(t *testing.T) {
	blocked := Evaluate([]Requirement{{Target: policyRef("ns.a"), Compliance: policyv1.Compliant}}, false, nil)
	blockedIgnored := Evaluate([]Requirement{{Target: policyRef("ns.a"), Compliance: policyv1.Compliant}}, true, nil)
	allowed := Evaluate(nil, false, nil)
	cases := []struct {
		name  string
		gates []Gate
		want  bool
	}{
		{"no templates", nil, false},
		{"all allowed", []Gate{allowed, allowed}, false},
		{"a blocked template makes the policy Pending", []Gate{allowed, blocked}, true},
		{"a blocked template with ignorePending does not", []Gate{allowed, blockedIgnored}, false},
		{"one of each", []Gate{blockedIgnored, blocked}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PolicyPending(tc.gates); got != tc.want {
				t.Errorf("PolicyPending = %v, want %v", got, tc.want)
			}
		})
	}
}
