package replication

import (
	"fmt"
	"unicode/utf8"
)

// MaxRootNameLength is the longest namespace and name of a root policy, counted
// together: its replicas are named and labelled "<namespace>.<name>", and a label
// value holds at most 63 characters. OCM's policy webhook refuses the same
// (len(namespace)+len(name) > 62).
const MaxRootNameLength = 62

// ValidateRootName returns an error when a root policy's replicas could never be
// written because its namespace and name are too long together.
func ValidateRootName(namespace, name string) error {
	if n := utf8.RuneCountInString(namespace) + utf8.RuneCountInString(name); n > MaxRootNameLength {
		return fmt.Errorf("the combined length of the policy namespace and name cannot exceed %d characters (it is %d): "+
			"the replicas' label %s=%s would exceed 63 characters, so the policy can never be propagated",
			MaxRootNameLength, n, LabelRootPolicy, Name(namespace, name))
	}
	return nil
}
