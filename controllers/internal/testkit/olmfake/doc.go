// Package olmfake is a TEST-ONLY FAKE of OLM (its catalog-operator and
// olm-operator) for the OperatorPolicy controller's integration tests. It is
// never used outside tests; the real OLM is exercised by the end-to-end test
// in controllers/internal/olme2e.
//
// It plays OLM's part on a bare API server, per namespace, the way OLM
// resolves a namespace as a whole:
//
//   - Resolution: every Subscription of the namespace that is not waiting for
//     an InstallPlan and whose catalog (a CatalogSource made by AddCatalog) has
//     a bundle for it — its startingCSV or the channel head for a first
//     install, the bundle that replaces its installed CSV for an upgrade — gets
//     it in ONE InstallPlan for the whole namespace, with
//     spec.clusterServiceVersionNames and status.bundleLookups (whose
//     properties carry olm.package). The plan is Manual, and waits in
//     RequiresApproval, when any Subscription of the namespace is Manual (as in
//     OLM); otherwise it is approved. The Subscriptions get currentCSV, state
//     UpgradePending, installPlanRef and the condition InstallPlanPending.
//   - Installation of an approved plan: the CRDs the bundles own, the
//     operators' Deployments (labelled as OLM labels them, with a status that is
//     available unless SetDeploymentAvailable says otherwise), and the CSVs
//     (labelled operators.coreos.com/<package>.<namespace>, cut to 63 characters as OLM cuts it) in phase Succeeded,
//     or Installing while a Deployment is unavailable; a replaced CSV is
//     deleted. The plan becomes Complete and the Subscriptions get installedCSV
//     and state AtLatestKnown.
//   - A CSV left Installing becomes Succeeded once its Deployments are
//     available. (Unlike OLM, a Succeeded CSV is not failed when a Deployment
//     becomes unavailable later.)
//
// Hold keeps a namespace from being resolved and installed until Release, so
// that a test can make OLM see several Subscriptions at once.
package olmfake
