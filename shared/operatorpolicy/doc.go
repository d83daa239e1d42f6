// Package operatorpolicy is the logic of an OperatorPolicy: one policy
// installs and governs one OLM operator. The
// expand-operator-policy KRM function and the spoke operator-policy controller
// both call it. It is pure: it reads only its arguments (time is passed in) and
// never talks to a cluster.
//
// # One model from two spellings
//
// Normalize turns an OperatorPolicy into a Policy. fleetpolicy's own spelling
// and the one OCM shipped are both accepted; when both set a setting they must
// agree. The pairs (allowedCSVs and versions into Allowed,
// subscription.installPlanApproval and upgradeApproval into Approval,
// statusConfig and complianceConfig into Effects, removal on deletion and
// complianceType mustnothave into Remove and OnDeletion, operatorGroup.target
// and targetNamespaces/selector into OperatorGroup), with their values, are
// one table: docs/ocm-fields.md, "The two spellings".
//
// Neither spelling wins a disagreement: the policy is invalid. For the
// approval, that is what OCM v0.19 does with any spec.subscription.installPlanApproval
// (its CRD admits the key; its controller reports "installPlanApproval is
// prohibited in spec.subscription" as ValidPolicySpec False, InvalidPolicySpec,
// NonCompliant, and creates nothing). fleetpolicy's CRD admits a disagreeing
// policy too, and the spoke reports this package's error the same way
// (EvaluateInvalid); expand-operator-policy reports it as an error result.
//
// Effect defaults are OCM's: catalogSourceUnhealthy Condition,
// deploymentsUnavailable NonCompliant, upgradesAvailable Condition,
// deprecationsPresent Condition, minorChannelUpgradeAvailable Condition; the
// fleetpolicy-only upgradesProgressing defaults to NonCompliant (OCM always
// counts an installing InstallPlan as NonCompliant). Removal defaults:
// operatorGroups DeleteIfUnused, subscriptions Delete, clusterServiceVersions
// Delete, installPlans, customResourceDefinitions and apiServiceDefinitions Keep.
// Enum values are matched ignoring case. spec.operatorGroup.namespace must be
// the subscription's. Normalize leaves an unset spec.subscription.namespace
// unset (never the policy's namespace, which on a managed cluster is the
// cluster's).
// spec.subscription and spec.operatorGroup stand for OLM's SubscriptionSpec and
// OperatorGroupSpec: a key the API types lack (their Extra) is an unknown field
// naming it, except operatorGroup.upgradeStrategy (Default or
// TechPreviewUnsafeFailForward) and staticProvidedAPIs, which go to the
// OperatorGroup. Every problem is reported (not only the first) as an
// apimachinery field error (field.Error: a disagreement between the spellings
// is about fleetpolicy's own field and names OCM's), all in one error naming the
// policy (namespace/name; Invalid).
//
// # Subscription defaults
//
// ApplySubscriptionDefaults fills in the subscription's channel, source,
// sourceNamespace and namespace when one of them is unset
// (NeedsSubscriptionDefaults), as OCM's config-policy-controller v0.19 does,
// from what the caller read on the cluster (SubscriptionDefaultsFrom). With
// the package's PackageManifest (unstructured, as packageserver serves it):
// source and sourceNamespace are its status.catalogSource and
// catalogSourceNamespace (missing: error; a policy naming another catalog:
// error), the channel its status.defaultChannel (missing: error), and the
// namespace that of the only Subscription in the policy's
// status.relatedObjects, else the operatorframework.io/suggested-namespace
// annotation of the currentCSVDesc of the subscription's channel. Without a
// PackageManifest, the Subscription named after the package in
// AdoptableNamespace (the subscription's namespace, else the only related
// Subscription's) is adopted: its namespace, channel and catalog fill what
// the policy leaves unset; with none to adopt, it is an error. A namespace
// still unset is the controller's default namespace, else an error. The
// errors are field errors of the mismatching fields (or of spec.subscription,
// naming the fields that stay unset), whose details start with OCM's messages
// word for word ("the subscription defaults could
// not be determined because the PackageManifest was not found", "... didn't
// specify a catalog", "... the catalog specified in the policy does not match
// what was found in the PackageManifest on the cluster", "the default channel
// could not be determined because the PackageManifest didn't specify one",
// "namespace is required in spec.subscription"). The OperatorGroup is put in
// the defaulted namespace (a different operatorGroup.namespace is an error).
//
// # Desired objects
//
// DesiredSubscription is the Subscription to create or keep in line (named after
// the package; installPlanApproval Manual when enforcing restricted CSVs).
// DesiredOperatorGroup is the OperatorGroup to create or keep in line: the one
// the policy names, else an AllNamespaces one named DefaultOperatorGroupName when
// the namespace has none and the operator supports AllNamespaces, else nil when
// one already exists; several OperatorGroups in the namespace are a conflict.
//
// # Identity
//
// The controller and the expand-operator-policy function name a policy's
// objects through one set of rules: OwnSubscription is the Subscription named
// after the package in the subscription's namespace (OCM looks it up by that
// namespace and name); OperatorLabel is the label OLM puts on the operator's
// components (operators.coreos.com/<package>.<namespace>, cut to 63 characters
// as OLM and OCM cut it); OperatorGroupName is the OperatorGroup's name;
// PreviouslyCreated reads back which of them the status says the policy
// created; ClusterDefaultedFields names the subscription fields left to the
// managed cluster, which a function without it must require.
//
// # InstallPlan approval
//
// DecideInstallPlanApproval approves a plan only when every CSV it lists or
// looks up is approved by some enforcing OperatorPolicy of the namespace that
// manages the CSV's package (olm.package packageName of its bundle lookup,
// matched to spec.subscription.name). A listed CSV is approved; with all CSVs
// allowed, Automatic approves any CSV and Manual only a first install. Anything
// else, including a lookup no policy covers, is never approved. Unlike OCM,
// which approves upgrades only with upgradeApproval Automatic, a CSV listed in
// allowedCSVs/versions is approved under Manual too: that is how story 2 of
// examples/api/operator-policy.yaml (the upgrade is allowed only once listed)
// upgrades.
//
// # Compliance
//
// Evaluate computes conditions, relatedObjects, the compliant state and the
// compliance event message from observed objects. Condition types are OCM's
// (ValidPolicySpec, OperatorGroupCompliant, SubscriptionCompliant,
// InstallPlanCompliant, ClusterServiceVersionCompliant, DeploymentCompliant,
// CatalogSourcesUnhealthy, NoDeprecations, MinorChannelUpgradeAvailable) plus
// the Subscription's InstallPlanPending, InstallPlanMissing, InstallPlanFailed,
// BundleUnpacking and BundleUnpackFailed, copied from it. A status
// governed by an Effect makes the policy NonCompliant only with NonCompliant;
// otherwise its message ends in " but not causing noncompliance", and with
// StatusMessageOnly it appears only in the event message. "…Compliant"
// conditions read True when the policy is compliant on their account;
// CatalogSourcesUnhealthy and MinorChannelUpgradeAvailable read True when the
// problem is there, NoDeprecations False, whatever the effect (statusConfig
// records the status either way). RelatedObjects report each
// object's own state. The Compliant condition carries the reason and message of
// the most recently changed condition that decides the verdict; the event
// message is "Compliant; " or "NonCompliant; " and every condition message,
// most recent lastTransitionTime first (ties in the order above). In inform
// mode, what is missing or different is reported as not created, updated or
// approved because the policy is not enforced.
//
// # Removal
//
// PlanRemoval lists, per removalBehavior, what removing the operator deletes
// and keeps (Subscription, InstallPlans, CSVs, owned CRDs and APIServices,
// OperatorGroup). An OperatorGroup the policy did not make is never touched;
// DeleteIfUnused deletes it only when no other Subscription remains in its
// namespace. Evaluate of a removing policy is NonCompliant while something it
// deletes is present.
//
// # Deletion
//
// What deleting an enforcing policy does depends on its spelling, decided once
// by SpellingOf: fleetpolicy's when the spec sets a field only fleetpolicy has
// (allowedCSVs, statusConfig, subscription.installPlanApproval,
// operatorGroup.target, removalBehavior.installPlans or .apiServiceDefinitions)
// and no field only OCM has (complianceType, upgradeApproval, versions,
// complianceConfig, operatorGroup.targetNamespaces or .selector); OCM's
// otherwise, a mix included. Policy.OnDeletion is the annotation
// AnnotationOnDeletion when set (Never, UserDeletion or Always), else
// UserDeletion for fleetpolicy's spelling and Never for OCM's. CauseOfDeletion
// reads why a template was deleted: the AnnotationDeletionCause the spoke's
// template sync writes before deleting (DependenciesUnsatisfied, PolicyGone,
// TemplateError, TemplateRemoved; an unknown value counts as transient), else PolicyGone when
// its owner Policy is gone (the garbage collector), else a user's deletion.
// RemovesOnDeletion: an enforcing policy removes its operator on deletion with
// Always, and with UserDeletion unless the cause is transient
// (DependenciesUnsatisfied, PolicyGone, TemplateError). HoldsFinalizer: an enforcing musthave
// policy whose OnDeletion is not Never.
//
// FleetpolicyOnly names what a policy sets that OCM's config-policy-controller
// would ignore (the fleetpolicy-only fields above and AnnotationOnDeletion), for a
// spoke that leaves OperatorPolicies to OCM's controller.
package operatorpolicy
