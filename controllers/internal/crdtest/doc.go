// Package crdtest holds the tests that prove fleetpolicy's CRDs against a real API
// server: every manifest under examples/ (examples/api's snippets among them) is
// stored without a field pruned or changed, also through the Go types, and
// invalid objects are refused with a message naming the field.
package crdtest
