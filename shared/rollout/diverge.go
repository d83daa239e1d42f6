package rollout

import (
	"fmt"
	"slices"
)

// Divergence compares the waves of a rollout plan computed earlier (each wave's
// clusters, in order) with the plan of the live fleet, and returns "" when they
// are the same rollout, otherwise the first difference in words.
func Divergence(planned [][]string, live Plan) string {
	for i := 0; i < max(len(planned), len(live.Waves)); i++ {
		switch {
		case i >= len(planned):
			return fmt.Sprintf("the live rollout has %d waves, the plan %d: wave %d %v is not planned",
				len(live.Waves), len(planned), i, live.Waves[i].Clusters)
		case i >= len(live.Waves):
			return fmt.Sprintf("the plan has %d waves, the live rollout %d: planned wave %d %v is gone",
				len(planned), len(live.Waves), i, planned[i])
		}
		want := slices.Sorted(slices.Values(planned[i]))
		if got := live.Waves[i].Clusters; !slices.Equal(want, got) {
			return fmt.Sprintf("wave %d: planned %v, live %v", i, want, got)
		}
	}
	return ""
}
