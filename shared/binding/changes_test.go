package binding

import (
	"reflect"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestChangedClusters(t *testing.T) {
	resolve := func(t *testing.T, root policyv1.RemediationAction, decisions Decisions, bindings ...policyv1.PlacementBinding) *Resolution {
		t.Helper()
		res, err := Resolve(rootPolicy(root), nil, bindings, decisions)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	initial := bind("initial", rule("placementrule-initial"))
	enforceSub := enforcing(bind("sub", rule("placementrule-sub")))
	restrictedSub := restrictedEnforcing(bind("sub", rule("placementrule-sub")))
	base := Decisions{rule("placementrule-initial"): {"A", "B", "C", "D"}, rule("placementrule-sub"): {"A", "B"}}
	withDecisions := func(initial, sub []string) Decisions {
		return Decisions{rule("placementrule-initial"): initial, rule("placementrule-sub"): sub}
	}

	tests := []struct {
		name          string
		before, after func(t *testing.T) *Resolution
		want          []string
	}{
		{
			name:   "nothing changed",
			before: func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, enforceSub) },
			after:  func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, enforceSub) },
			want:   nil,
		},
		{
			name:   "first resolution: every bound cluster",
			before: func(*testing.T) *Resolution { return nil },
			after:  func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, enforceSub) },
			want:   []string{"A", "B", "C", "D"},
		},
		{
			name:   "policy deleted: every formerly bound cluster",
			before: func(t *testing.T) *Resolution { return resolve(t, inform, base, initial) },
			after:  func(*testing.T) *Resolution { return nil },
			want:   []string{"A", "B", "C", "D"},
		},
		{
			name:   "cluster removed from the enforce placement flips back to inform",
			before: func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, enforceSub) },
			after: func(t *testing.T) *Resolution {
				return resolve(t, inform, withDecisions([]string{"A", "B", "C", "D"}, []string{"B"}), initial, enforceSub)
			},
			want: []string{"A"},
		},
		{
			name:   "cluster removed from the base placement is unbound, restricted enforce or not",
			before: func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, restrictedSub) },
			after: func(t *testing.T) *Resolution {
				return resolve(t, inform, withDecisions([]string{"A", "C", "D"}, []string{"A", "B"}), initial, restrictedSub)
			},
			want: []string{"B"},
		},
		{
			name: "clusters added and removed",
			before: func(t *testing.T) *Resolution {
				return resolve(t, inform, withDecisions([]string{"A", "C"}, nil), initial)
			},
			after: func(t *testing.T) *Resolution {
				return resolve(t, inform, withDecisions([]string{"B", "C", "D"}, nil), initial)
			},
			want: []string{"A", "B", "D"},
		},
		{
			name:   "override removed: the enforced clusters",
			before: func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, enforceSub) },
			after: func(t *testing.T) *Resolution {
				return resolve(t, inform, base, initial, bind("sub", rule("placementrule-sub")))
			},
			want: []string{"A", "B"},
		},
		{
			name:   "override added while the root enforces changes no replica",
			before: func(t *testing.T) *Resolution { return resolve(t, enforceCapital, base, initial) },
			after:  func(t *testing.T) *Resolution { return resolve(t, enforceCapital, base, initial, enforceSub) },
			want:   nil,
		},
		{
			name:   "root switched to enforce: the clusters not enforced yet",
			before: func(t *testing.T) *Resolution { return resolve(t, inform, base, initial, enforceSub) },
			after:  func(t *testing.T) *Resolution { return resolve(t, "enforce", base, initial, enforceSub) },
			want:   []string{"C", "D"},
		},
		{
			name:   "both nil",
			before: func(*testing.T) *Resolution { return nil },
			after:  func(*testing.T) *Resolution { return nil },
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ChangedClusters(tt.before(t), tt.after(t)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ChangedClusters() = %q, want %q", got, tt.want)
			}
		})
	}
}
