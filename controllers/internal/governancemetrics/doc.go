// Package governancemetrics serves OCM's cluster_policy_governance_info gauge
// from the spoke, as OCM's config-policy-controller does: one series per
// ConfigurationPolicy and OperatorPolicy, labelled with its kind, name,
// namespace and spec.severity, valued 0 when Compliant, 1 when NonCompliant
// and -1 otherwise (Pending, unknown). It is registered on controller-runtime's
// metrics registry, so the spoke's metrics endpoint serves it.
package governancemetrics
