package configpolicy

import (
	"encoding/json"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// FuzzCompare checks, for any two JSON objects, that Compare does not panic, and
// that enforcing converges: the merged object matches the template unless a
// status field differs.
func FuzzCompare(f *testing.F) {
	f.Add(`{"data":{"k":"v"}}`, `{"data":{"k":"w","x":1}}`, true)
	f.Add(`{"spec":{"l":[1,{"a":[2]},"x"]}}`, `{"spec":{"l":[{"a":[2,3]},1]}}`, false)
	f.Add(`{"metadata":{"labels":{"a":"b"}},"status":{"s":1}}`, `{"metadata":"x","status":[]}`, true)
	f.Fuzz(func(t *testing.T, desiredDoc, existingDoc string, only bool) {
		var desired, existing map[string]any
		if json.Unmarshal([]byte(desiredDoc), &desired) != nil || json.Unmarshal([]byte(existingDoc), &existing) != nil {
			return
		}
		ct := policyv1.MustHave
		if only {
			ct = policyv1.MustOnlyHave
		}
		got := Compare(desired, existing, ct, ct)
		if got.Matches {
			return
		}
		if again := Compare(desired, got.Merged, ct, ct); !again.Matches && !got.statusDiffers() {
			t.Fatalf("merged object %v does not match %v: %v", got.Merged, desired, again.Mismatches)
		}
	})
}
