package krm

import (
	"slices"
	"testing"
)

func TestChangedKeys(t *testing.T) {
	cases := []struct {
		name              string
		before, after     map[string]string
		wantSet, wantGone []string
	}{
		{"none", nil, nil, nil, nil},
		{"unchanged", map[string]string{"a": "1"}, map[string]string{"a": "1"}, nil, nil},
		{"added, changed and removed", map[string]string{"a": "1", "b": "2", "c": "3"}, map[string]string{"b": "2", "c": "4", "d": "5"},
			[]string{"c", "d"}, []string{"a"}},
		{"an empty value is a value", map[string]string{"a": ""}, map[string]string{}, nil, []string{"a"}},
	}
	for _, tc := range cases {
		set, removed := ChangedKeys(tc.before, tc.after)
		if !slices.Equal(set, tc.wantSet) || !slices.Equal(removed, tc.wantGone) {
			t.Errorf("%s: set %v, removed %v; want %v, %v", tc.name, set, removed, tc.wantSet, tc.wantGone)
		}
	}
}
