// Package testkit is the test kit of the controllers' integration tests, and
// is imported by _test.go files only (no binary links it, nor the testing
// package through it):
//
//   - starting what a test runs against: StartFleet (a hub and spokes for one
//     test), RunPackage (a TestMain's API servers and controllers, shared by
//     the package's tests), FatalOrSkip and SkipsPackage (skipped under
//     go test -short, see localplane.ErrShortTest);
//   - writing and reading objects, failing the test on error: Apply,
//     ApplyObjects, ApplyFile, Get, RootStatus;
//   - waiting: Eventually polls a check until it passes or a timeout ends.
//
// Its subpackages start the controllers in a test (hubtest, spoketest) and
// fake what cannot run here (olmfake, a test-only fake of OLM).
package testkit
