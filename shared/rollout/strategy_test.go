package rollout

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// TestResolveStrategy checks defaults and normalisation, written as the JSON of
// the resolved spec.
func TestResolveStrategy(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"empty is All, every default spelled out", `{}`,
			`{"type":"All","all":{"minSuccessTime":"0s","progressDeadline":"None","maxFailures":0}}`},
		{"All keeps its ignored settings as written", `{"all":{"minSuccessTime":"5m","maxFailures":2,"progressDeadline":"1h"}}`,
			`{"type":"All","all":{"minSuccessTime":"5m0s","progressDeadline":"1h","maxFailures":2}}`},
		{"Progressive without block", `{"type":"Progressive"}`,
			`{"type":"Progressive","progressive":{"minSuccessTime":"0s","progressDeadline":"None","maxFailures":0,"maxConcurrency":0}}`},
		{"digits as a string become an integer", `{"type":"Progressive","progressive":{"maxFailures":"3","maxConcurrency":"007"}}`,
			`{"type":"Progressive","progressive":{"minSuccessTime":"0s","progressDeadline":"None","maxFailures":3,"maxConcurrency":7}}`},
		{"percentages lose leading zeros", `{"type":"Progressive","progressive":{"maxFailures":"05%","maxConcurrency":"100%"}}`,
			`{"type":"Progressive","progressive":{"minSuccessTime":"0s","progressDeadline":"None","maxFailures":"5%","maxConcurrency":"100%"}}`},
		{"an empty string is unset", `{"type":"ProgressivePerGroup","progressivePerGroup":{"maxFailures":""}}`,
			`{"type":"ProgressivePerGroup","progressivePerGroup":{"minSuccessTime":"0s","progressDeadline":"None","maxFailures":0}}`},
		{"mandatory groups are kept", `{"type":"ProgressivePerGroup","progressivePerGroup":{"mandatoryDecisionGroups":[{"groupName":"canary"},{"groupIndex":2}],"progressDeadline":"2h30m"}}`,
			`{"type":"ProgressivePerGroup","progressivePerGroup":{"minSuccessTime":"0s","progressDeadline":"2h30m","maxFailures":0,"mandatoryDecisionGroups":[{"groupName":"canary"},{"groupIndex":2}]}}`},
		{"a block of another type holding only defaults is dropped", `{"type":"Progressive","all":{"progressDeadline":"None"},"progressivePerGroup":{}}`,
			`{"type":"Progressive","progressive":{"minSuccessTime":"0s","progressDeadline":"None","maxFailures":0,"maxConcurrency":0}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in clusterv1alpha1.RolloutStrategy
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			s, err := ResolveStrategy(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(s.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestResolveStrategyEffectiveValues checks the parsed values the planner uses.
func TestResolveStrategyEffectiveValues(t *testing.T) {
	s, err := ResolveStrategy(clusterv1alpha1.RolloutStrategy{All: &clusterv1alpha1.RolloutAll{
		RolloutConfig: clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: time.Hour}, MaxFailures: intstr.FromInt32(3)},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.MinSuccessTime != 0 || s.MaxFailures != intstr.FromInt32(0) || s.ProgressDeadline != nil {
		t.Fatalf("All: soak %s, maxFailures %s, deadline %v; want the library's 0, 0 and None", s.MinSuccessTime, s.MaxFailures.String(), s.ProgressDeadline)
	}
	s, err = ResolveStrategy(progressive(intstr.FromString("25%"), clusterv1alpha1.RolloutConfig{
		MinSuccessTime: metav1.Duration{Duration: 5 * time.Minute}, ProgressDeadline: "90s", MaxFailures: intstr.FromString("2"),
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.MinSuccessTime != 5*time.Minute || s.ProgressDeadline == nil || *s.ProgressDeadline != 90*time.Second ||
		s.MaxFailures != intstr.FromInt32(2) || s.MaxConcurrency != intstr.FromString("25%") {
		t.Fatalf("got %+v", s)
	}
}

// TestResolveStrategyErrors checks that every invalid setting is rejected naming
// its field, all at once.
func TestResolveStrategyErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		path *field.Path
		want []string
	}{
		{"unknown type", `{"type":"all"}`, nil,
			[]string{`spec.rolloutStrategy.type: Unsupported value: "all": supported values: "All", "Progressive", "ProgressivePerGroup"`}},
		{"bad durations", `{"type":"Progressive","progressive":{"progressDeadline":"1d","minSuccessTime":"-5m"}}`, nil,
			[]string{`spec.rolloutStrategy.progressive.progressDeadline: Invalid value: "1d"`,
				`spec.rolloutStrategy.progressive.minSuccessTime: Invalid value: "-5m0s": must not be negative`}},
		{"deadline without unit", `{"all":{"progressDeadline":"0"}}`, nil,
			[]string{`spec.rolloutStrategy.all.progressDeadline: Invalid value: "0"`}},
		{"deadline that only starts like one", `{"type":"All","all":{"progressDeadline":"5mfoo"}}`, nil,
			[]string{`spec.rolloutStrategy.all.progressDeadline: Invalid value: "5mfoo"`}},
		{"negative and above 100%", `{"type":"Progressive","progressive":{"maxFailures":-1,"maxConcurrency":"150%"}}`, nil,
			[]string{`spec.rolloutStrategy.progressive.maxFailures: Invalid value: -1`,
				`spec.rolloutStrategy.progressive.maxConcurrency: Invalid value: "150%"`}},
		{"malformed", `{"type":"ProgressivePerGroup","progressivePerGroup":{"maxFailures":"1.5%"}}`, nil,
			[]string{`spec.rolloutStrategy.progressivePerGroup.maxFailures: Invalid value: "1.5%"`}},
		{"not a number", `{"type":"ProgressivePerGroup","progressivePerGroup":{"maxFailures":"two"}}`, field.NewPath("functionConfig", "spec", "strategy"),
			[]string{`functionConfig.spec.strategy.progressivePerGroup.maxFailures: Invalid value: "two"`}},
		{"too large", `{"type":"Progressive","progressive":{"maxConcurrency":"99999999999"}}`, nil,
			[]string{`spec.rolloutStrategy.progressive.maxConcurrency: Invalid value: "99999999999"`}},
		{"maxConcurrency 0%", `{"type":"Progressive","progressive":{"maxConcurrency":"0%"}}`, nil,
			[]string{`spec.rolloutStrategy.progressive.maxConcurrency: Invalid value: "0%": must be more than 0%`}},
		{"settings in the block of another type", `{"type":"ProgressivePerGroup","progressive":{"maxConcurrency":1}}`, nil,
			[]string{`spec.rolloutStrategy.progressive: Forbidden: is ignored when type is ProgressivePerGroup`}},
		{"settings without a type", `{"progressivePerGroup":{"minSuccessTime":"1m"}}`, nil,
			[]string{`spec.rolloutStrategy.progressivePerGroup: Forbidden: is ignored when type is All`}},
		{"negative mandatory index", `{"type":"Progressive","progressive":{"mandatoryDecisionGroups":[{"groupIndex":-1}]}}`, nil,
			[]string{`spec.rolloutStrategy.progressive.mandatoryDecisionGroups[0].groupIndex: Invalid value: -1`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in clusterv1alpha1.RolloutStrategy
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			_, err := ResolveStrategy(in, tc.path)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// TestParseProgressDeadlineMatchesLibrary checks the deadline syntax against the
// values whose handling by OCM's rollout library reference/propagator.md §6.4
// records.
func TestParseProgressDeadlineMatchesLibrary(t *testing.T) {
	cases := []struct {
		in   string
		want string // "none", "error" or the duration
	}{
		{"", "none"}, {"None", "none"}, {"10m", "10m0s"}, {"2h30m", "2h30m0s"}, {"0s", "0s"}, {"90s", "1m30s"},
		{"0", "error"}, {"1d", "error"}, {"none", "error"}, {"-5m", "error"}, {"1.5h", "error"}, {" 5m", "error"}, {"xNone", "error"},
	}
	for _, tc := range cases {
		d, err := parseProgressDeadline(tc.in)
		got := "none"
		switch {
		case err != nil:
			got = "error"
		case d != nil:
			got = d.String()
		}
		if got != tc.want {
			t.Errorf("parseProgressDeadline(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestRolloutSize checks the library's size rule: integers as they are,
// percentages rounded up, anything outside 1..total the fallback.
func TestRolloutSize(t *testing.T) {
	cases := []struct {
		v               intstr.IntOrString
		total, fallback int
		want            int
	}{
		{intstr.FromInt32(2), 5, 5, 2},
		{intstr.FromString("40%"), 5, 5, 2},
		{intstr.FromString("41%"), 5, 5, 3},
		{intstr.FromString("1%"), 5, 5, 1},
		{intstr.FromInt32(0), 5, 5, 5},
		{intstr.FromString("0%"), 5, 0, 0},
		{intstr.FromInt32(10), 5, 0, 0},
		{intstr.FromString("100%"), 5, 0, 5},
		{intstr.FromInt32(1), 0, 0, 0},
	}
	for _, tc := range cases {
		if got := rolloutSize(tc.v, tc.total, tc.fallback); got != tc.want {
			t.Errorf("rolloutSize(%s, %d, %d) = %d, want %d", tc.v.String(), tc.total, tc.fallback, got, tc.want)
		}
	}
}

// FuzzNormaliseSize checks that any maxFailures or maxConcurrency string is either
// rejected or normalised to a value the planner can size, never panicking, and
// that normalising is idempotent.
func FuzzNormaliseSize(f *testing.F) {
	for _, s := range []string{"", "0", "5", "007", "5%", "05%", "100%", "101%", "-1", "1.5%", "%", "99999999999", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := normaliseSize(intstr.FromString(s), field.NewPath("maxFailures"))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "maxFailures: Invalid value") {
				t.Fatalf("error %q does not name the field", err)
			}
			return
		}
		again, err := normaliseSize(v, field.NewPath("maxFailures"))
		if err != nil || again != v {
			t.Fatalf("normalising %q gave %v, then %v (%v)", s, v, again, err)
		}
		if size := rolloutSize(v, 10, 10); size < 1 || size > 10 {
			t.Fatalf("%q sizes %d of 10", s, size)
		}
	})
}

// FuzzResolveStrategy checks that no rollout strategy JSON makes ResolveStrategy
// panic, and that a resolved strategy resolves to itself.
func FuzzResolveStrategy(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"type":"Progressive","progressive":{"maxConcurrency":"25%","maxFailures":2,"progressDeadline":"10m","minSuccessTime":"5m"}}`,
		`{"type":"ProgressivePerGroup","progressivePerGroup":{"mandatoryDecisionGroups":[{"groupName":"a"}]}}`,
		`{"type":"All","all":{"progressDeadline":"xNone"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in clusterv1alpha1.RolloutStrategy
		if json.Unmarshal([]byte(s), &in) != nil {
			return
		}
		resolved, err := ResolveStrategy(in, nil)
		if err != nil {
			return
		}
		again, err := ResolveStrategy(resolved.Spec, nil)
		if err != nil {
			t.Fatalf("resolved strategy %+v is rejected: %v", resolved.Spec, err)
		}
		a, _ := json.Marshal(resolved.Spec)
		b, _ := json.Marshal(again.Spec)
		if string(a) != string(b) {
			t.Fatalf("resolving twice differs:\n%s\n%s", a, b)
		}
	})
}
