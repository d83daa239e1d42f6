package configpolicy

import (
	"fmt"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// FieldError is a problem with one field of a ConfigurationPolicy; the caller
// names the object.
type FieldError struct {
	// Field is the path of the field, e.g. spec.namespaceSelector.include[1].
	Field string
	// Message says what is wrong.
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// ParseComplianceType returns the canonical (lower-case) compliance type, or a
// *FieldError for field when ct is not musthave, mustonlyhave or mustnothave in
// any capitalisation.
func ParseComplianceType(ct policyv1.ComplianceType, field string) (policyv1.ComplianceType, error) {
	switch c := policyv1.ComplianceType(strings.ToLower(string(ct))); c {
	case policyv1.MustHave, policyv1.MustOnlyHave, policyv1.MustNotHave:
		return c, nil
	}
	return "", &FieldError{Field: field, Message: fmt.Sprintf("compliance type %q is not one of musthave, mustonlyhave, mustnothave", ct)}
}

// MetadataComplianceType is the compliance type for labels and annotations: the
// metadataComplianceType when set, else the object's compliance type, where
// mustnothave means musthave (the object's labels are what identify it).
func MetadataComplianceType(ct, metadataCT policyv1.ComplianceType, field string) (policyv1.ComplianceType, error) {
	if metadataCT != "" {
		mct, err := ParseComplianceType(metadataCT, field)
		if err != nil {
			return "", err
		}
		if mct == policyv1.MustNotHave {
			return "", &FieldError{Field: field, Message: "metadataComplianceType must be musthave or mustonlyhave"}
		}
		return mct, nil
	}
	if ct == policyv1.MustNotHave {
		return policyv1.MustHave, nil
	}
	return ct, nil
}
