// Package replication builds the replicated policy the hub writes into a bound
// cluster's namespace, exactly as OCM's propagator shapes it, and fingerprints
// what the hub owns in a replica (Digest) so that drift is found by comparing
// digests.
//
// A replica of root policy <ns>/<name> for cluster C is named "<ns>.<name>" in
// namespace C and carries the labels policy.open-cluster-management.io/
// {cluster-name,cluster-namespace,root-policy}. Its spec is the root's with the
// cluster's effective remediationAction (from package binding, or from the
// rollout) and the dependencies canonicalised for the cluster namespace (package
// dependency). Labels and annotations are copied per spec.copyPolicyMetadata
// (unset or true: all; false: only policy.open-cluster-management.io/ ones); the
// trigger-update annotation and kubectl's last-applied-configuration are never
// copied, and the annotation argocd.argoproj.io/compare-options: IgnoreExtraneous
// is always set. Status, owner references, finalizers and resourceVersion are not
// copied. The package is pure: no I/O.
package replication
