// Package operatorpolicy is the spoke's OperatorPolicy controller: it runs on
// the managed cluster and makes one OperatorPolicy install and govern one OLM
// operator. It is a thin adapter: every decision is shared/operatorpolicy's
// (Normalize, DesiredOperatorGroup, DesiredSubscription,
// DecideInstallPlanApproval, Evaluate, PlanRemoval); this package reads the
// cluster, calls them and writes what they decide.
//
// Setup registers the controller on a manager of the managed cluster. Per
// OperatorPolicy, a reconcile:
//
//   - Resolves the managed-cluster templates ({{ ... }}) of spec.versions,
//     spec.subscription and spec.operatorGroup against the cluster, as OCM
//     does (unless the annotation
//     policy.open-cluster-management.io/disable-templates says not to), and
//     watches what they read: a change of it reconciles the policy. A template
//     that cannot be resolved makes the policy invalid (below) with the error.
//     A policy whose subscription namespace or catalog is templated, or unset
//     (defaulted below), is mapped from the OLM objects of every namespace.
//   - Normalises the policy. A policy Normalize rejects gets the condition
//     ValidPolicySpec=False naming the fields, NonCompliant and a compliance
//     event; nothing else is done for it and the other policies go on.
//   - Defaults what spec.subscription leaves unset (channel, source,
//     sourceNamespace, namespace) as OCM does, with
//     operatorpolicy.ApplySubscriptionDefaults: it reads the package's
//     PackageManifest (packages.operators.coreos.com/v1, served by OLM's
//     packageserver; read uncached in namespace "default", as OCM reads it)
//     and, without one, the Subscription to adopt (in the subscription's
//     namespace, else that of the only Subscription of status.relatedObjects).
//     No PackageManifest API at all counts as no PackageManifest. A namespace
//     still unset is Options.DefaultNamespace (the spoke's
//     --operator-policy-default-namespace, OCM's flag). Defaults that cannot
//     be had make the spec invalid, as above, with OCM's message. packageserver
//     serves no watch: a policy that needs defaults is reconciled again every
//     30 seconds, so that a PackageManifest that appears or changes is seen.
//   - Reads the OperatorGroups, Subscriptions and InstallPlans of the
//     subscription's namespace, the operator's ClusterServiceVersions (those
//     labelled operators.coreos.com/<package>.<namespace>, cut to 63
//     characters as OLM cuts it (operatorpolicy.OperatorLabel), and the
//     Subscription's installed and current ones), the Deployments those CSVs
//     list, and the Subscription's CatalogSource.
//   - inform: writes nothing but the policy's status; what is missing or
//     different is reported as not created, updated or approved.
//   - enforce: creates the subscription's namespace when missing, creates or
//     updates the OperatorGroup and then the Subscription (only while the
//     OperatorGroup is right), and approves every InstallPlan of the namespace
//     that DecideInstallPlanApproval approves, deciding with ALL the
//     OperatorPolicies whose subscription is in that namespace (one that
//     leaves its namespace unset counts in the namespace its status last
//     related its Subscription in).
//   - Removal, per spec.removalBehavior: when the policy is complianceType
//     mustnothave, the Delete steps of PlanRemoval are deleted. An enforcing
//     musthave policy that some deletion would remove
//     (operatorpolicy.HoldsFinalizer: fleetpolicy's spelling, or the
//     remove-on-deletion annotation) carries the finalizer Finalizer. When it
//     is deleted, the cause is read (the mark template sync wrote, or whether
//     its owner Policy is gone, read from the API server) and, if
//     operatorpolicy.RemovesOnDeletion says so, the Delete steps are deleted
//     before the finalizer is released; otherwise it is released at once and
//     nothing is removed. A policy in OCM's spelling, an inform policy and one
//     deleted by the spoke for a transient reason (dependency unmet, policy gone
//     from the cluster) remove nothing.
//   - Uninstalling: while the OperatorPolicy CRD is being deleted (or is
//     gone, read from the API server), a deleted policy is released without
//     removing anything. ReleaseFinalizers is the path once the spoke is gone
//     (fleetpolicy-spoke --uninstall): it removes Finalizer from every
//     OperatorPolicy and deletes nothing.
//   - Writes status.compliant, conditions, relatedObjects and
//     observedGeneration (Evaluate's), and, when the compliance or a condition
//     changed, a compliance event first: a core Event about the OperatorPolicy
//     whose message is "Compliant; ..." or "NonCompliant; ..." and whose reason
//     is "policy: <namespace>/<name>", and the same about the parent Policy
//     when the OperatorPolicy has an ownerReference to one (as the spoke's
//     template sync creates it), except while the OperatorPolicy is being
//     deleted. Event names are package history's, so the spoke's status sync
//     orders them.
//
// A relatedObject keeps createdByPolicy (and the "created" condition reasons)
// for as long as the object the policy created keeps its name.
//
// Watches: OperatorPolicies (spec, labels, annotations, deletion) and the OLM
// objects the reconcile reads — Subscriptions, InstallPlans, OperatorGroups,
// CatalogSources (full objects, cached) and ClusterServiceVersions and
// Deployments (metadata only, cached; their contents are read uncached when
// needed, so that the copied CSVs OLM puts in every namespace and the
// cluster's Deployments are not held in memory). A change maps to the
// policies whose subscription is in the object's namespace; a CatalogSource
// change to the policies and Subscriptions that name it. Copied CSVs are
// ignored.
package operatorpolicy
