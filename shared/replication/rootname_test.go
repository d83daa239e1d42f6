package replication

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestValidateRootName holds the rule to what it protects: a root passes
// exactly when "<namespace>.<name>" is a valid label value.
func TestValidateRootName(t *testing.T) {
	cases := []struct {
		namespace, name string
		valid           bool
	}{
		{"policies", "p", true},
		{strings.Repeat("n", 31), strings.Repeat("p", 31), true},  // 62: "<ns>.<name>" is 63
		{strings.Repeat("n", 31), strings.Repeat("p", 32), false}, // 63: the label would be 64
		{strings.Repeat("n", 10), strings.Repeat("p", 52), true},
		{strings.Repeat("n", 10), strings.Repeat("p", 53), false},
		{strings.Repeat("n", 63), "p", false},
	}
	for _, tc := range cases {
		err := ValidateRootName(tc.namespace, tc.name)
		if (err == nil) != tc.valid {
			t.Errorf("%d+%d characters: valid %v, want %v (%v)", len(tc.namespace), len(tc.name), err == nil, tc.valid, err)
		}
		labelOK := len(validation.IsValidLabelValue(Name(tc.namespace, tc.name))) == 0
		if labelOK != tc.valid {
			t.Errorf("%d+%d characters: the rule says %v but the label value is valid: %v", len(tc.namespace), len(tc.name), tc.valid, labelOK)
		}
		if err != nil && !strings.Contains(err.Error(), "cannot exceed 62 characters") {
			t.Errorf("message does not say OCM's limit: %v", err)
		}
	}
}
