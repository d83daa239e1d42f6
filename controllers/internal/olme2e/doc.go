// Package olme2e is the end-to-end test of the OperatorPolicy controller with
// the REAL OLM, as localplane.StartOLM runs it: olm-operator and
// catalog-operator (bin/, built by `make olm-binaries`) against a local API
// server, and `opm serve` serving the file-based catalog of
// testdata/olm-catalog (its README), whose bundles are embedded (image "" and
// olm.bundle.object properties), so that no bundle unpack Job (which needs a
// kubelet) is made.
//
// There is no kube-controller-manager and no kubelet: a test-only stand-in
// (localplane.DeploymentStatusStandIn) writes each Deployment's status as the
// deployment controller would once its pods run, which is what OLM waits for
// before a CSV succeeds.
//
// OLM's packageserver is not run, so there is no PackageManifest API: the
// test also checks that an OperatorPolicy naming only its package and
// namespace adopts the real Subscription, and that one naming no namespace is
// invalid with OCM's "PackageManifest was not found" message.
//
// TestRealOLM runs only with FLEETPOLICY_E2E_OLM=1 (`make e2e-olm` sets it);
// without it, it skips. TestCatalogIsTheBundles always runs: the catalog must
// be the rendering of the bundle manifests under testdata/bundle (`go test
// ./controllers/internal/olme2e -run TestCatalogIsTheBundles -update`
// rewrites it).
package olme2e
