package binding

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func ptr[T any](v T) *T { return &v }

func overrideBinding(ocmAction string, ocmFilter policyv1.SubFilter, own *policyv1.RemediationActionOverride) *policyv1.PlacementBinding {
	return &policyv1.PlacementBinding{
		ObjectMeta:                metav1.ObjectMeta{Namespace: "policies", Name: "enforce-pb"},
		BindingOverrides:          policyv1.BindingOverrides{RemediationAction: ocmAction},
		SubFilter:                 ocmFilter,
		RemediationActionOverride: own,
	}
}

func ownOverride(action string, subFilter *bool) *policyv1.RemediationActionOverride {
	return &policyv1.RemediationActionOverride{RemediationAction: action, SubFilter: subFilter}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		pb   *policyv1.PlacementBinding
		want Override
	}{
		{name: "no override", pb: overrideBinding("", "", nil), want: Override{}},
		{name: "empty fleetpolicy override", pb: overrideBinding("", "", ownOverride("", nil)), want: Override{}},
		{name: "ocm enforce", pb: overrideBinding("enforce", "", nil), want: Override{Enforce: true}},
		{name: "ocm Enforce capitalised", pb: overrideBinding("Enforce", "", nil), want: Override{Enforce: true}},
		{name: "ocm enforce in any case", pb: overrideBinding("ENFORCE", "", nil), want: Override{Enforce: true}},
		{name: "ocm restricted", pb: overrideBinding("", policyv1.Restricted, nil), want: Override{Restricted: true}},
		{name: "ocm enforce restricted", pb: overrideBinding("enforce", policyv1.Restricted, nil), want: Override{Enforce: true, Restricted: true}},
		{name: "fleetpolicy enforce", pb: overrideBinding("", "", ownOverride("enforce", nil)), want: Override{Enforce: true}},
		{name: "fleetpolicy Enforce capitalised", pb: overrideBinding("", "", ownOverride("Enforce", nil)), want: Override{Enforce: true}},
		{name: "fleetpolicy subFilter true", pb: overrideBinding("", "", ownOverride("", ptr(true))), want: Override{Restricted: true}},
		{name: "fleetpolicy subFilter false", pb: overrideBinding("", "", ownOverride("enforce", ptr(false))), want: Override{Enforce: true}},
		{name: "fleetpolicy enforce subFilter true", pb: overrideBinding("", "", ownOverride("enforce", ptr(true))), want: Override{Enforce: true, Restricted: true}},
		{name: "both spellings agree", pb: overrideBinding("enforce", policyv1.Restricted, ownOverride("enforce", ptr(true))), want: Override{Enforce: true, Restricted: true}},
		{name: "both spellings agree ignoring case", pb: overrideBinding("Enforce", policyv1.Restricted, ownOverride("enforce", ptr(true))), want: Override{Enforce: true, Restricted: true}},
		{name: "both agree on not restricted", pb: overrideBinding("enforce", "", ownOverride("enforce", ptr(false))), want: Override{Enforce: true}},
		{name: "action from ocm, subFilter from fleetpolicy", pb: overrideBinding("enforce", "", ownOverride("", ptr(true))), want: Override{Enforce: true, Restricted: true}},
		{name: "action from fleetpolicy, subFilter from ocm", pb: overrideBinding("", policyv1.Restricted, ownOverride("enforce", nil)), want: Override{Enforce: true, Restricted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.pb)
			if err != nil {
				t.Fatalf("Normalize() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("Normalize() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNormalizeRejects(t *testing.T) {
	tests := []struct {
		name       string
		pb         *policyv1.PlacementBinding
		wantFields []string // the Field of each field error, in order
		wantText   string
	}{
		{
			name:       "ocm inform is not an override",
			pb:         overrideBinding("inform", "", nil),
			wantFields: []string{"bindingOverrides.remediationAction"},
			wantText:   `bindingOverrides.remediationAction: Unsupported value: "inform": supported values: "enforce"`,
		},
		{
			name:       "fleetpolicy inform is not an override",
			pb:         overrideBinding("", "", ownOverride("Inform", nil)),
			wantFields: []string{"remediationActionOverride.remediationAction"},
			wantText:   `remediationActionOverride.remediationAction: Unsupported value: "Inform": supported values: "enforce"`,
		},
		{
			name:       "unknown subFilter",
			pb:         overrideBinding("", "strict", nil),
			wantFields: []string{"subFilter"},
			wantText:   `subFilter: Unsupported value: "strict": supported values: "restricted"`,
		},
		{
			name:       "actions disagree",
			pb:         overrideBinding("enforce", "", ownOverride("inform", nil)),
			wantFields: []string{"remediationActionOverride.remediationAction", "remediationActionOverride.remediationAction"},
			wantText:   `remediationActionOverride.remediationAction: Invalid value: "inform": disagrees with bindingOverrides.remediationAction ("enforce")`,
		},
		{
			name:       "subFilter true but not restricted",
			pb:         overrideBinding("enforce", "strict", ownOverride("enforce", ptr(true))),
			wantFields: []string{"subFilter", "remediationActionOverride.subFilter"},
			wantText:   `remediationActionOverride.subFilter: Invalid value: true: disagrees with subFilter ("strict")`,
		},
		{
			name:       "subFilter false but restricted",
			pb:         overrideBinding("enforce", policyv1.Restricted, ownOverride("enforce", ptr(false))),
			wantFields: []string{"remediationActionOverride.subFilter"},
			wantText:   `remediationActionOverride.subFilter: Invalid value: false: disagrees with subFilter ("restricted")`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := Normalize(tt.pb)
			if len(errs) == 0 {
				t.Fatalf("Normalize() = %+v, want an error", got)
			}
			if got != (Override{}) {
				t.Errorf("Normalize() returned %+v with its error, want the zero Override", got)
			}
			var gotFields []string
			for _, e := range errs {
				gotFields = append(gotFields, e.Field)
			}
			if !reflect.DeepEqual(gotFields, tt.wantFields) {
				t.Errorf("fields = %q, want %q", gotFields, tt.wantFields)
			}
			if msg := errs.ToAggregate().Error(); !strings.Contains(msg, tt.wantText) {
				t.Errorf("error %q does not say %q", msg, tt.wantText)
			}
		})
	}
}

func TestNormalizeNil(t *testing.T) {
	if _, errs := Normalize(nil); len(errs) == 0 {
		t.Fatal("Normalize(nil) returned no error")
	}
}

func TestResolveNamesBindingWithoutNamespace(t *testing.T) {
	pb := overrideBinding("inform", "", nil)
	pb.Namespace = ""
	if got := bindingRef(pb); got != "enforce-pb" {
		t.Fatalf("bindingRef() = %q, want enforce-pb", got)
	}
}

// FuzzNormalize checks, for any combination of both spellings, that Normalize never
// panics, accepts exactly the valid and consistent inputs, names the binding in
// every error, and returns an Override that each spelling alone reproduces.
func FuzzNormalize(f *testing.F) {
	f.Fuzz(func(t *testing.T, ocmAction, ocmFilter string, hasOwn bool, ownAction string, hasOwnFilter, ownFilter bool) {
		var own *policyv1.RemediationActionOverride
		if hasOwn {
			own = &policyv1.RemediationActionOverride{RemediationAction: ownAction}
			if hasOwnFilter {
				own.SubFilter = &ownFilter
			}
		}
		pb := overrideBinding(ocmAction, policyv1.SubFilter(ocmFilter), own)
		got, errs := Normalize(pb)
		err := errs.ToAggregate()

		validAction := func(a string) bool { return a == "" || strings.EqualFold(a, "enforce") }
		ownAct, ownFilterSet := "", false
		if own != nil {
			ownAct, ownFilterSet = own.RemediationAction, own.SubFilter != nil
		}
		acceptable := validAction(ocmAction) && validAction(ownAct) &&
			(ocmFilter == "" || ocmFilter == "restricted") &&
			!(ownFilterSet && ocmFilter != "" && ownFilter != (ocmFilter == "restricted"))
		if acceptable != (err == nil) {
			t.Fatalf("Normalize(%+v) error = %v, want error: %t", pb, err, !acceptable)
		}
		if err != nil {
			for _, e := range errs {
				if !slices.Contains([]string{"bindingOverrides.remediationAction", "subFilter",
					"remediationActionOverride.remediationAction", "remediationActionOverride.subFilter"}, e.Field) {
					t.Fatalf("error %q does not name an override field", e)
				}
			}
			return
		}
		wantEnforce := ocmAction != "" || ownAct != ""
		wantRestricted := ocmFilter != "" || (ownFilterSet && ownFilter)
		if got != (Override{Enforce: wantEnforce, Restricted: wantRestricted}) {
			t.Fatalf("Normalize(%+v) = %+v", pb, got)
		}

		// Each spelling alone gives the same Override.
		ocmOnly := overrideBinding("", "", nil)
		ownOnly := overrideBinding("", "", &policyv1.RemediationActionOverride{SubFilter: ptr(got.Restricted)})
		if got.Enforce {
			ocmOnly.BindingOverrides.RemediationAction = "Enforce"
			ownOnly.RemediationActionOverride.RemediationAction = "enforce"
		}
		if got.Restricted {
			ocmOnly.SubFilter = policyv1.Restricted
		}
		for _, alone := range []*policyv1.PlacementBinding{ocmOnly, ownOnly} {
			if again, errs := Normalize(alone); len(errs) > 0 || again != got {
				t.Fatalf("Normalize(%+v) = %+v, %v; want %+v", alone, again, errs, got)
			}
		}
	})
}
