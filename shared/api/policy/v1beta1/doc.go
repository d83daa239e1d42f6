// Package v1beta1 holds the policy.open-cluster-management.io/v1beta1 types:
// PolicySet and OperatorPolicy. OperatorPolicy accepts both fleetpolicy's own
// spelling (allowedCSVs, statusConfig, subscription.installPlanApproval,
// removalBehavior with six kinds) and the spelling OCM shipped (versions,
// complianceConfig, upgradeApproval, complianceType: mustnothave); package
// shared/operatorpolicy normalises the two into one model. The keys of
// spec.subscription and spec.operatorGroup these types lack are kept in their
// Extra field and written back when encoded (extra.go), never dropped.
//
// +kubebuilder:object:generate=true
// +groupName=policy.open-cluster-management.io
package v1beta1
