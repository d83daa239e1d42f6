package placement

import (
	"maps"
	"testing"
)

func TestResultApply(t *testing.T) {
	for _, tc := range []struct {
		name        string
		result      map[string]string
		current     map[string]string
		want        map[string]string
		wantChanged bool
	}{
		{"first placement", map[string]string{ClustersAnnotation: "a,b"}, map[string]string{"team": "x"},
			map[string]string{"team": "x", ClustersAnnotation: "a,b", ManagedAnnotations: ClustersAnnotation}, true},
		{"policy value wins", map[string]string{"zone": "eu"}, map[string]string{"zone": "us"},
			map[string]string{"zone": "eu", ManagedAnnotations: "zone"}, true},
		{"unchanged", map[string]string{"zone": "eu"}, map[string]string{"zone": "eu", ManagedAnnotations: "zone"},
			map[string]string{"zone": "eu", ManagedAnnotations: "zone"}, false},
		{"annotation no longer set is removed", map[string]string{"zone": "eu"},
			map[string]string{"zone": "eu", ClustersAnnotation: "a", ManagedAnnotations: ClustersAnnotation + ",zone", "team": "x"},
			map[string]string{"zone": "eu", ManagedAnnotations: "zone", "team": "x"}, true},
		{"no policy sets anything any more", nil,
			map[string]string{ClustersAnnotation: "a", ManagedAnnotations: ClustersAnnotation},
			map[string]string{}, true},
		{"user annotation never removed", nil, map[string]string{ClustersAnnotation: "a"},
			map[string]string{ClustersAnnotation: "a"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.current)
			got, changed := Result{Annotations: tc.result}.Apply(tc.current)
			if !maps.Equal(got, tc.want) || changed != tc.wantChanged {
				t.Fatalf("Apply = %v, %v; want %v, %v", got, changed, tc.want, tc.wantChanged)
			}
			if !maps.Equal(tc.current, before) {
				t.Fatal("Apply modified current")
			}
		})
	}
}
