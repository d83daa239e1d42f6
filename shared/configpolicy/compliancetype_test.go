package configpolicy

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestParseComplianceType(t *testing.T) {
	cases := []struct {
		in      policyv1.ComplianceType
		want    policyv1.ComplianceType
		wantErr string
	}{
		{in: "musthave", want: policyv1.MustHave},
		{in: "MustHave", want: policyv1.MustHave},
		{in: "Mustonlyhave", want: policyv1.MustOnlyHave},
		{in: "MUSTNOTHAVE", want: policyv1.MustNotHave},
		{in: "", wantErr: `spec.object-templates[0].complianceType: Unsupported value: "": supported values: "musthave", "mustonlyhave", "mustnothave"`},
		{in: "should", wantErr: `spec.object-templates[0].complianceType: Unsupported value: "should": supported values: "musthave", "mustonlyhave", "mustnothave"`},
	}
	for _, tc := range cases {
		got, err := ParseComplianceType(tc.in, field.NewPath("spec", "object-templates").Index(0).Child("complianceType"))
		if tc.wantErr != "" {
			var fe *field.Error
			if !errors.As(err, &fe) || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %s", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestMetadataComplianceType(t *testing.T) {
	cases := []struct {
		ct, mct policyv1.ComplianceType
		want    policyv1.ComplianceType
		wantErr bool
	}{
		{ct: policyv1.MustHave, want: policyv1.MustHave},
		{ct: policyv1.MustOnlyHave, want: policyv1.MustOnlyHave},
		{ct: policyv1.MustNotHave, want: policyv1.MustHave},
		{ct: policyv1.MustOnlyHave, mct: "MustHave", want: policyv1.MustHave},
		{ct: policyv1.MustHave, mct: "mustonlyhave", want: policyv1.MustOnlyHave},
		{ct: policyv1.MustHave, mct: "mustnothave", wantErr: true},
		{ct: policyv1.MustHave, mct: "nope", wantErr: true},
	}
	for _, tc := range cases {
		got, err := MetadataComplianceType(tc.ct, tc.mct, field.NewPath("f"))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("(%q, %q): got %q, %v; want %q (error %v)", tc.ct, tc.mct, got, err, tc.want, tc.wantErr)
		}
	}
}
