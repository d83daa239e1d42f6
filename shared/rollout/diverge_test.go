package rollout

import (
	"strings"
	"testing"
)

func TestDivergence(t *testing.T) {
	live := Plan{Waves: []Wave{{Index: 0, Clusters: []string{"a"}}, {Index: 1, Clusters: []string{"b", "c"}}}}
	for _, tc := range []struct {
		name    string
		planned [][]string
		want    string // substring; "" means no divergence
	}{
		{"same", [][]string{{"a"}, {"c", "b"}}, ""},
		{"a cluster moved", [][]string{{"a", "b"}, {"c"}}, "wave 0: planned [a b], live [a]"},
		{"a wave more live", [][]string{{"a"}}, "the live rollout has 2 waves, the plan 1"},
		{"a wave fewer live", [][]string{{"a"}, {"b", "c"}, {"d"}}, "planned wave 2 [d] is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Divergence(tc.planned, live)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Divergence = %q, want %q", got, tc.want)
			}
		})
	}
}
