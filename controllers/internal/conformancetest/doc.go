// Package conformancetest applies the conformance corpus (conformance/corpus:
// manifests written the way users of a real OCM hub write them) to a
// fleetpolicy hub with strict field validation, schedules its Placements with
// OCM's own placement controller, and checks that fleetpolicy's spokes create
// and evaluate every template on two managed clusters as OCM would: nothing
// refused, pruned or left unevaluated. crdtest.TestConformanceCorpusIsOCM checks
// that the corpus is valid for OCM v0.19's CRDs; functions/conformance_test.go
// runs it through every KRM function. conformance/README.md is the index of
// these tests and of those against OCM's own components.
package conformancetest
