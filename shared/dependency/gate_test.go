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

// TestMessageNamesTheDependencyNotItsState checks that a blocked template's
// message stays the same while its dependency moves between missing, no
// status, Pending and NonCompliant, so that template sync writes one
// compliance event for the wait, as OCM's does, not one per move.
func TestMessageNamesTheDependencyNotItsState(t *testing.T) {
	a := Requirement{Target: policyRef("ns.a"), Compliance: policyv1.Compliant, Field: dependencyField(0)}
	want := "Dependencies were not satisfied: 1 is still pending (Policy ns.a)"
	for _, seen := range []Observation{{}, {Found: true}, {Found: true, Compliance: policyv1.Pending}, {Found: true, Compliance: policyv1.NonCompliant}} {
		if got := Evaluate([]Requirement{a}, false, map[Ref]Observation{a.Target: seen}).Message(); got != want {
			t.Errorf("dependency seen as %+v: %q, want %q", seen, got, want)
		}
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
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (Policy ns.a)"},
		{name: "missing object", reqs: []Requirement{a},
			observed:       map[Ref]Observation{a.Target: {}},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (Policy ns.a)"},
		{name: "unobserved counts as missing", reqs: []Requirement{a},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (Policy ns.a)"},
		{name: "missing status field", reqs: []Requirement{bar},
			observed:       map[Ref]Observation{bar.Target: {Found: true}},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (ConfigurationPolicy bar)"},
		{name: "every unmet dependency is named, sorted as OCM sorts them", reqs: []Requirement{a, bar},
			observed:       map[Ref]Observation{a.Target: seen(policyv1.Pending), bar.Target: seen(policyv1.Compliant)},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 2 are still pending (ConfigurationPolicy bar, Policy ns.a)"},
		{name: "only unmet dependencies are named", reqs: []Requirement{a, bar},
			observed:       map[Ref]Observation{a.Target: seen(policyv1.Compliant), bar.Target: seen(policyv1.Compliant)},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (ConfigurationPolicy bar)"},
		{name: "ignorePending reports Compliant", reqs: []Requirement{a}, ignorePending: true,
			wantCompliance: policyv1.Compliant,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (Policy ns.a) but ignorePending is true"},
		{name: "a dependency required twice is named once", reqs: []Requirement{a, {Target: a.Target, Compliance: policyv1.Compliant, Field: extraDependencyField(0, 1)}},
			observed:       map[Ref]Observation{a.Target: seen(policyv1.NonCompliant)},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (Policy ns.a)"},
		{name: "a namespaced dependency is named by kind and name, as OCM names it", reqs: []Requirement{{Target: Ref{Group: "constraints.gatekeeper.sh", Kind: "K8sRequiredLabels", Namespace: "ns", Name: "labels"}, Compliance: policyv1.Compliant, Field: extraDependencyField(0, 0)}},
			wantCompliance: policyv1.Pending,
			wantMessage:    "Dependencies were not satisfied: 1 is still pending (K8sRequiredLabels labels)"},
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
