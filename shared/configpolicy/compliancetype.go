package configpolicy

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// ParseComplianceType returns the canonical (lower-case) compliance type, or a
// *field.Error for path when ct is not musthave, mustonlyhave or mustnothave in
// any capitalisation.
func ParseComplianceType(ct policyv1.ComplianceType, path *field.Path) (policyv1.ComplianceType, error) {
	switch c := policyv1.ComplianceType(strings.ToLower(string(ct))); c {
	case policyv1.MustHave, policyv1.MustOnlyHave, policyv1.MustNotHave:
		return c, nil
	}
	return "", field.NotSupported(path, ct, []policyv1.ComplianceType{policyv1.MustHave, policyv1.MustOnlyHave, policyv1.MustNotHave})
}

// MetadataComplianceType is the compliance type for labels and annotations: the
// metadataComplianceType when set, else the object's compliance type, where
// mustnothave means musthave (the object's labels are what identify it).
func MetadataComplianceType(ct, metadataCT policyv1.ComplianceType, path *field.Path) (policyv1.ComplianceType, error) {
	if metadataCT != "" {
		mct, err := ParseComplianceType(metadataCT, path)
		if err != nil {
			return "", err
		}
		if mct == policyv1.MustNotHave {
			return "", field.NotSupported(path, metadataCT, []policyv1.ComplianceType{policyv1.MustHave, policyv1.MustOnlyHave})
		}
		return mct, nil
	}
	if ct == policyv1.MustNotHave {
		return policyv1.MustHave, nil
	}
	return ct, nil
}
