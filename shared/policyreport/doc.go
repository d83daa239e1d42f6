// Package policyreport builds the OpenReports Report
// (github.com/openreports/reports-api, openreports.io/v1alpha1) that the hub
// writes in each cluster namespace, so that Policy Reporter and other
// OpenReports consumers show fleetpolicy's compliance beside Kyverno's. It is
// pure: it reads only its arguments, and the time is the caller's.
//
// ForCluster makes the Report of one cluster from the root policies bound to
// it: one result per root whose status.status[] entry for the cluster has a
// compliance, in policy name order, with the summary counted from them.
//
//   - Compliant is pass, NonCompliant is fail.
//   - Pending is skip. OCM's Pending means the policy was not evaluated on the
//     cluster: a dependency is not met yet (package dependency), so its
//     templates wait. OpenReports defines skip as a policy not selected for
//     evaluation and warn as requirements not met on a policy that is not
//     scored; Pending says nothing about the requirements, and reporting it as
//     warn would count waiting policies among the problems a consumer filters
//     and notifies on. It is therefore skip, with a message that says it waits.
//   - A cluster that has not reported (no compliance yet) has no result: there
//     is nothing to report about it.
//
// Each result names the root policy ("namespace/name") as its policy, the
// replicated Policy on the cluster as its resource, OCM's categories
// annotation (policy.open-cluster-management.io/categories) as its category,
// and OCM's standards and controls annotations and the cluster's rollout
// status as properties; the Report's scope is the ManagedCluster. A result's
// timestamp is the previous Report's for the same policy while its result and
// message are unchanged, and now otherwise, so that a Report computed again
// from unchanged input equals the one stored: the caller writes only when
// Equal says it differs (bounded writes, however often the policies are
// evaluated).
package policyreport
