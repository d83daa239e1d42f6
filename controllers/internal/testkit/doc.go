// Package testkit is the test kit of the controllers' integration tests, and
// is imported by _test.go files only (no binary links it, nor the testing
// package through it: TestBinariesLinkNoTestCode):
//
//   - starting what a test runs against: StartFleet (a hub and spokes for one
//     test), RunPackage and RunWithPlane (the API servers and controllers a
//     TestMain starts for its package's tests), FatalOrSkip and SkipsPackage
//     (skipped under go test -short, see localplane.ErrShortTest), NewManager
//     (a manager with test options, for a controller set up by hand), LogStop;
//   - writing and reading objects, failing the test on error: Apply,
//     TryApply, ApplyObjects, ApplyFile, Get, RootStatus, RepoRoot,
//     KustomizeBuild (a kustomization rendered by bin/kustomize), and
//     PlacementRuleBinding, the YAML that binds root policies to clusters;
//   - reading the in-process controllers' metrics: CounterSum;
//   - waiting: Eventually polls a check until it passes or a timeout ends;
//     WaitOperatorPolicy waits for an OperatorPolicy's status.
//
// Its subpackages start the controllers in a test or a TestMain (hubtest,
// spoketest) and fake what cannot run here (olmfake, a test-only fake of OLM).
package testkit
