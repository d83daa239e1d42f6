package configpolicy

import (
	"slices"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestCompare(t *testing.T) {
	const (
		have = policyv1.MustHave
		only = policyv1.MustOnlyHave
	)
	cases := []struct {
		name           string
		desired        string
		existing       string
		ct, mct        policyv1.ComplianceType
		wantMismatches []string // nil: matches
		wantMerged     string   // JSON of Merged when it does not match
	}{
		{name: "identity fields are not compared", ct: have, mct: have,
			desired:  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x"},"data":{"k":"v"}}`,
			existing: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"y","uid":"1"},"data":{"k":"v","other":"o"}}`},
		{name: "musthave: a missing key", ct: have, mct: have,
			desired:        `{"data":{"k":"v","k2":"v2"}}`,
			existing:       `{"metadata":{"name":"a"},"data":{"k":"v"}}`,
			wantMismatches: []string{"data.k2"},
			wantMerged:     `{"data":{"k":"v","k2":"v2"},"metadata":{"name":"a"}}`},
		{name: "musthave: a different value keeps extra keys in the merge", ct: have, mct: have,
			desired:        `{"data":{"k":"new"}}`,
			existing:       `{"data":{"k":"old","extra":"e"}}`,
			wantMismatches: []string{"data.k"},
			wantMerged:     `{"data":{"extra":"e","k":"new"}}`},
		{name: "mustonlyhave: an extra key", ct: only, mct: only,
			desired:        `{"data":{"k":"v"}}`,
			existing:       `{"data":{"k":"v","extra":"e"}}`,
			wantMismatches: []string{"data.extra"},
			wantMerged:     `{"data":{"k":"v"}}`},
		{name: "mustonlyhave: an extra empty key is no difference", ct: only, mct: only,
			desired:  `{"data":{"k":"v"}}`,
			existing: `{"data":{"k":"v","extra":""}}`},
		{name: "numbers compare by value", ct: only, mct: only,
			desired:  `{"spec":{"replicas":3,"ratio":0.5}}`,
			existing: `{"spec":{"replicas":3.0,"ratio":0.5}}`},
		{name: "a number is not a string", ct: have, mct: have,
			desired:        `{"spec":{"port":80}}`,
			existing:       `{"spec":{"port":"80"}}`,
			wantMismatches: []string{"spec.port"},
			wantMerged:     `{"spec":{"port":80}}`},
		{name: "missing equals empty", ct: have, mct: have,
			desired:  `{"data":{},"spec":{"list":[],"s":""}}`,
			existing: `{"spec":{}}`},
		{name: "a map where a string is", ct: have, mct: have,
			desired:        `{"spec":{"x":{"a":1}}}`,
			existing:       `{"spec":{"x":"a"}}`,
			wantMismatches: []string{"spec.x"},
			wantMerged:     `{"spec":{"x":{"a":1}}}`},
		{name: "musthave list: items found in any order", ct: have, mct: have,
			desired:  `{"spec":{"ports":[{"port":443},{"port":80}]}}`,
			existing: `{"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"},{"port":8080}]}}`},
		{name: "musthave list: a missing item is appended", ct: have, mct: have,
			desired:        `{"spec":{"ports":[{"port":80},{"port":9090}]}}`,
			existing:       `{"spec":{"ports":[{"port":80,"name":"http"}]}}`,
			wantMismatches: []string{"spec.ports[1]"},
			wantMerged:     `{"spec":{"ports":[{"name":"http","port":80},{"port":9090}]}}`},
		{name: "musthave list: each desired item needs its own match", ct: have, mct: have,
			desired:        `{"spec":{"args":["a","a"]}}`,
			existing:       `{"spec":{"args":["a"]}}`,
			wantMismatches: []string{"spec.args[1]"},
			wantMerged:     `{"spec":{"args":["a","a"]}}`},
		{name: "mustonlyhave list: same items, other order", ct: only, mct: only,
			desired:  `{"spec":{"args":["b","a"]}}`,
			existing: `{"spec":{"args":["a","b"]}}`},
		{name: "mustonlyhave list: an extra item", ct: only, mct: only,
			desired:        `{"spec":{"args":["a"]}}`,
			existing:       `{"spec":{"args":["a","b"]}}`,
			wantMismatches: []string{"spec.args"},
			wantMerged:     `{"spec":{"args":["a"]}}`},
		{name: "mustonlyhave list items are compared exactly", ct: only, mct: only,
			desired:        `{"spec":{"ports":[{"port":80}]}}`,
			existing:       `{"spec":{"ports":[{"port":80,"name":"http"}]}}`,
			wantMismatches: []string{"spec.ports[0]"},
			wantMerged:     `{"spec":{"ports":[{"port":80}]}}`},
		{name: "labels musthave", ct: have, mct: have,
			desired:  `{"metadata":{"name":"a","labels":{"team":"x"}}}`,
			existing: `{"metadata":{"name":"a","labels":{"team":"x","other":"y"}}}`},
		{name: "labels mustonlyhave by metadataComplianceType", ct: have, mct: only,
			desired:        `{"metadata":{"name":"a","labels":{"team":"x"}}}`,
			existing:       `{"metadata":{"name":"a","labels":{"team":"x","other":"y"}}}`,
			wantMismatches: []string{"metadata.labels.other"},
			wantMerged:     `{"metadata":{"labels":{"team":"x"},"name":"a"}}`},
		{name: "annotations missing on the object", ct: have, mct: have,
			desired:        `{"metadata":{"annotations":{"a":"1"}}}`,
			existing:       `{"data":{}}`,
			wantMismatches: []string{"metadata.annotations"},
			wantMerged:     `{"data":{},"metadata":{"annotations":{"a":"1"}}}`},
		{name: "a data mismatch under mustonlyhave with musthave labels", ct: only, mct: have,
			desired:        `{"metadata":{"labels":{"a":"1"}},"data":{"k":"v"}}`,
			existing:       `{"metadata":{"labels":{"a":"1","b":"2"}},"data":{"k":"v","x":"y"}}`,
			wantMismatches: []string{"data.x"},
			wantMerged:     `{"data":{"k":"v"},"metadata":{"labels":{"a":"1","b":"2"}}}`},
		{name: "status is compared but never merged", ct: have, mct: have,
			desired:        `{"status":{"phase":"Active"}}`,
			existing:       `{"status":{"phase":"Terminating"}}`,
			wantMismatches: []string{"status.phase"},
			wantMerged:     `{"status":{"phase":"Terminating"}}`},
		{name: "desired null means absent", ct: have, mct: have,
			desired:        `{"spec":{"x":null}}`,
			existing:       `{"spec":{"x":"set"}}`,
			wantMismatches: []string{"spec.x"},
			wantMerged:     `{"spec":{"x":null}}`},
		{name: "a whole top-level field missing", ct: have, mct: have,
			desired:        `{"rules":[{"verbs":["get"]}]}`,
			existing:       `{}`,
			wantMismatches: []string{"rules"},
			wantMerged:     `{"rules":[{"verbs":["get"]}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			desired, existing := obj(t, tc.desired), obj(t, tc.existing)
			before := toJSON(t, existing)
			got := Compare(desired, existing, tc.ct, tc.mct)
			if toJSON(t, existing) != before {
				t.Fatal("Compare modified the existing object")
			}
			if tc.wantMismatches == nil {
				if !got.Matches || got.Merged != nil || len(got.Mismatches) > 0 {
					t.Fatalf("got %+v, want a match", got)
				}
				return
			}
			if got.Matches {
				t.Fatalf("matches, want mismatches %v", tc.wantMismatches)
			}
			if !slices.Equal(got.Mismatches, tc.wantMismatches) {
				t.Errorf("mismatches %v, want %v", got.Mismatches, tc.wantMismatches)
			}
			if merged := toJSON(t, got.Merged); merged != tc.wantMerged {
				t.Errorf("merged %s, want %s", merged, tc.wantMerged)
			}
			// Enforcing converges: the merged object matches, unless status differs.
			if again := Compare(desired, got.Merged, tc.ct, tc.mct); !again.Matches && !got.statusDiffers() {
				t.Errorf("the merged object does not match: %v", again.Mismatches)
			}
		})
	}
}

func TestFixable(t *testing.T) {
	cases := []struct {
		mismatches []string
		fixable    bool
	}{
		{[]string{"data.k"}, true},
		{[]string{"status.phase"}, false},
		{[]string{"status"}, false},
		{[]string{"status[0]"}, false},
		{[]string{"statusText"}, true},
		{[]string{"spec.x", "status.phase"}, true},
	}
	for _, tc := range cases {
		if got := (Comparison{Mismatches: tc.mismatches}).Fixable(); got != tc.fixable {
			t.Errorf("%v: Fixable %v, want %v", tc.mismatches, got, tc.fixable)
		}
	}
}

// TestCompareExpected: Expected is Merged with the template's status merged
// in, for the diff; Merged keeps the status as it was.
func TestCompareExpected(t *testing.T) {
	desired := obj(t, `{"spec":{"x":1},"status":{"phase":"Ready"}}`)
	existing := obj(t, `{"spec":{"x":2},"status":{"phase":"Pending","other":"o"}}`)
	got := Compare(desired, existing, policyv1.MustHave, policyv1.MustHave)
	if merged := toJSON(t, got.Merged); merged != `{"spec":{"x":1},"status":{"other":"o","phase":"Pending"}}` {
		t.Errorf("merged %s", merged)
	}
	if expected := toJSON(t, got.Expected); expected != `{"spec":{"x":1},"status":{"other":"o","phase":"Ready"}}` {
		t.Errorf("expected %s", expected)
	}
	specOnly := Compare(obj(t, `{"spec":{"x":1}}`), existing, policyv1.MustHave, policyv1.MustHave)
	if toJSON(t, specOnly.Expected) != toJSON(t, specOnly.Merged) {
		t.Errorf("without a status difference, expected %s differs from merged %s", toJSON(t, specOnly.Expected), toJSON(t, specOnly.Merged))
	}
	if match := Compare(desired, desired, policyv1.MustHave, policyv1.MustHave); match.Expected != nil {
		t.Errorf("a match has expected %v", match.Expected)
	}
}
