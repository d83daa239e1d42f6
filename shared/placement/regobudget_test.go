package placement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRegoMemoryBombsStop evaluates placement policies written to exhaust
// memory: each stops with an error naming the policy, having allocated a
// bounded amount, instead of taking the hub, the webhook or check-placement
// down with it.
func TestRegoMemoryBombsStop(t *testing.T) {
	var doubling strings.Builder
	doubling.WriteString("s0 := \"0123456789abcdef\"\n")
	for i := 1; i <= 32; i++ { // 16 bytes doubled 32 times: 64 GiB
		fmt.Fprintf(&doubling, "s%d := concat(\"\", [s%d, s%d])\n", i, i-1, i-1)
	}
	doubling.WriteString("errors contains \"long\" if count(s32) > 0\n")
	cases := []struct {
		name, body string
		want       error // nil: any error naming the policy
		wantText   string
	}{
		{"numbers.range", "errors contains \"many\" if count(numbers.range(1, 400000000)) > 0\n", ErrRegoMemoryBudget, ""},
		{"string doubling", doubling.String(), ErrRegoMemoryBudget, ""},
		{"nested comprehension", "errors contains \"many\" if count([x | some i in numbers.range(1, 20000); some j in numbers.range(1, 20000); x := [i, j]]) > 0\n", ErrRegoMemoryBudget, ""},
		{"sprintf width", "errors contains sprintf(\"%0999999d\", [1])\n", nil, "adding up to more than"},
		{"sprintf many verbs", "errors contains sprintf(\"" + strings.Repeat("%060000d", 1000) + "\", [" + strings.Repeat("1,", 999) + "1])\n", nil, "adding up to more than"},
		{"sprintf width from the arguments", "errors contains sprintf(\"%0*d\", [999999999, 1])\n", nil, "taken from the arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := loaded(t, exampleClusters(t), policyConfigMap("bomb", Rego, map[string]string{
				"p.rego": "package fleetpolicy.placement\n" + c.body,
			}))
			before := heapAllocated()
			_, err := e.Evaluate(context.Background(), resource(nil))
			allocated := heapAllocated() - before
			if err == nil {
				t.Fatal("the evaluation succeeded")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), "bomb") || !strings.Contains(err.Error(), c.wantText) {
				t.Errorf("error %q does not name the policy and say %q", err, c.wantText)
			}
			// One step past the budget at most (a doubling, a watch interval).
			if limit := uint64(8 * RegoMemoryBudget); allocated > limit {
				t.Errorf("allocated %d MiB, more than %d MiB", allocated>>20, limit>>20)
			}
		})
	}
}

// TestFormatWidths: the widths and precisions sprintf may use.
func TestFormatWidths(t *testing.T) {
	for format, ok := range map[string]bool{
		"%s":             true,
		"%d%%":           true,
		"%-20s|%.3f":     true,
		"%08.2f":         true,
		"%[1]d":          true,
		"%65536d":        true,
		"%65537d":        false,
		"%40000d%40000d": false,
		"%.99999999f":    false,
		"%*d":            false,
		"%.*f":           false,
		"100%":           true,
	} {
		if err := checkFormatWidths(format); (err == nil) != ok {
			t.Errorf("%q: error %v, want allowed %v", format, err, ok)
		}
	}
}
