package krm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestErrorResults checks that every field error an error holds becomes a
// result naming its field, through joins and aggregates, and that any other
// error becomes a result with its text.
func TestErrorResults(t *testing.T) {
	obj, err := fn.ParseKubeObject([]byte("apiVersion: v1\nkind: Thing\nmetadata:\n  name: x\n  namespace: ns\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := field.NewPath("spec")
	invalid := field.Invalid(spec.Child("size"), -1, "must not be negative")
	required := field.Required(spec.Child("name"), "")
	type want struct{ field, message string }
	cases := []struct {
		name string
		err  error
		want []want
	}{
		{"none", nil, nil},
		{"a field error", invalid, []want{{"spec.size", "Invalid value: -1: must not be negative"}}},
		{"an ErrorList's aggregate", field.ErrorList{invalid, required}.ToAggregate(),
			[]want{{"spec.size", "Invalid value: -1: must not be negative"}, {"spec.name", "Required value"}}},
		{"joined, wrapped and nested", errors.Join(fmt.Errorf("the thing: %w", invalid),
			utilerrors.NewAggregate([]error{required, errors.New("plain")})),
			[]want{{"spec.size", "Invalid value: -1: must not be negative"}, {"spec.name", "Required value"}, {"", "plain"}}},
		{"an object's ErrorList, wrapped", fmt.Errorf("Thing ns/x: %w", field.ErrorList{invalid, required}.ToAggregate()),
			[]want{{"spec.size", "Invalid value: -1: must not be negative"}, {"spec.name", "Required value"}}},
		{"one field error, wrapped", fmt.Errorf("Thing ns/x: %w", field.ErrorList{required}.ToAggregate()),
			[]want{{"spec.name", "Required value"}}},
		{"another error", errors.New("boom"), []want{{"", "boom"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			results := ErrorResults(obj, fn.Warning, tc.err)
			if len(results) != len(tc.want) {
				t.Fatalf("got %d results (%v), want %d", len(results), results, len(tc.want))
			}
			for i, r := range results {
				path := ""
				if r.Field != nil {
					path = r.Field.Path
				}
				if path != tc.want[i].field || r.Message != tc.want[i].message || r.Severity != fn.Warning ||
					r.ResourceRef == nil || r.ResourceRef.Name != "x" || r.ResourceRef.Namespace != "ns" {
					t.Errorf("result %d = %+v (field %q), want field %q message %q about ns/x", i, r, path, tc.want[i].field, tc.want[i].message)
				}
			}
		})
	}
}

// TestUnreadableWithoutField checks the wording of an item that cannot be
// decoded for a reason that names no field (TestDecodeNamesTheField checks
// one that does).
func TestUnreadableWithoutField(t *testing.T) {
	obj, err := fn.ParseKubeObject([]byte("apiVersion: v1\nkind: Thing\nmetadata:\n  name: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := Unreadable(obj, errors.New("not YAML"))
	if r.Severity != fn.Error || r.Message != "cannot be read: not YAML" || r.Field != nil {
		t.Errorf("Unreadable(other error) = %+v", r)
	}
}
