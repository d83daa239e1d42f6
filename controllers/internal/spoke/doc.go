// Package spoke is the controller that runs on each managed cluster (the
// spoke): a thin adapter between the hub's cluster namespace, the managed
// cluster and the pure logic of shared/dependency, shared/configpolicy and
// shared/compliance.
//
// It runs these controllers in one manager on the managed cluster, with the
// hub as a second cluster whose cache holds only the cluster's namespace:
//
//   - Spec sync mirrors the replicated policies of the hub's cluster namespace
//     into the same namespace of the managed cluster (creating it), and removes
//     a copy when its replica goes. The copy records the hub replica's
//     generation in the annotation fleetpolicy.io/hub-generation.
//   - Template sync creates, updates and deletes each policy's templates
//     (ConfigurationPolicy, OperatorPolicy, any kind whose CRD is labelled
//     policy.open-cluster-management.io/policy-type=template) in the cluster
//     namespace, owned by the policy, with the policy's remediationAction
//     written on as OCM's framework add-on does (replication.
//     InheritRemediationAction: with or without the key; InformOnly stays
//     inform) — only while the template's dependencies are met
//     (dependency.Evaluate). A blocked template is deleted, reports Pending (or
//     Compliant with ignorePending) with a message naming every unmet
//     dependency and, when the policy is on a dependency cycle, the cycle (its
//     first 20 objects when longer, dependency.MaxPathNodes);
//     a compliance event says so. Dependencies are watched: a change of a
//     dependency's compliance reconciles the policies waiting for it. Bad
//     templates (undecodable, unknown kind, not a template kind, conflicting
//     dependencies, rejected by the API server) are "template-error" events and
//     NonCompliant, never a crash. So is a policy template carrying the hub's
//     policy.open-cluster-management.io/hub-templates-error annotation (with
//     that message; not created, removed if it was). Before deleting a
//     template, template sync writes why on it (annotation fleetpolicy.io/deletion-cause:
//     DependenciesUnsatisfied, PolicyGone when the policy left the cluster,
//     TemplateError while a template of the policy is in error,
//     TemplateRemoved when the policy no longer holds it; the first cause
//     written stays), so that an
//     OperatorPolicy keeps its operator when the deletion is transient
//     (shared/operatorpolicy RemovesOnDeletion).
//   - Status sync (the same reconcile) writes the policy's status: per template
//     its templateMeta, compliance (the template's own status.compliant, or
//     template sync's verdict) and history (the compliance events about the
//     policy, newest first, at most 10; package history), the policy's
//     compliance (compliance.Aggregate) and observedGeneration — the policy
//     generation every template has been synced for and has evaluated.
//   - Hub status sync copies that status to the hub replica, a burst of changes
//     at once, with observedGeneration translated to the hub replica's
//     generation the copy was made from, leaving rolloutStatus (the hub's)
//     alone; the newest compliance event of each template is copied there
//     when the hub has not seen it (one Event per template and write, the
//     older entries being in the replica's history). A status that says
//     nothing yet (a template of the copy's generation not evaluated and
//     one without any compliance), or whose template's newest history entry
//     disagrees with its compliance (the event not in the cache yet), is
//     held until it does, at most 30 s; one with a ConfigurationPolicy the
//     spoke evaluates itself and that has no compliance yet is held until
//     its evaluation gives it one, however long that takes. A
//     hub whose Policy CRD lacks status.observedGeneration (OCM's) drops it
//     with a warning; once a write shows that, it is no longer sent.
//   - Secret sync copies the hub's policy-encryption-key Secret of the cluster
//     namespace (data only) to the same namespace of the managed cluster,
//     updates it when the hub's changes and deletes it when the hub's goes, as
//     OCM's framework add-on does; both caches hold that Secret only.
//   - The ConfigurationPolicy controller (package configpolicy) evaluates and
//     enforces the ConfigurationPolicy templates, resolving their
//     managed-cluster templates with the copied key, and prunes what they
//     created.
//
// Options.ConfigurationPolicyEvaluator and OperatorPolicyEvaluator (the
// flags --configurationpolicy-evaluator and --operatorpolicy-evaluator) may
// leave a kind to OCM's config-policy-controller (EvaluatorOCM): the spoke
// then starts no ConfigurationPolicy controller (nor managed-cluster template
// resolution and pruning), or no OperatorPolicy controller, and reports what
// OCM's controller writes — the template's status.compliant (Terminating, or
// any other value but Compliant, Pending and NonCompliant, is NonCompliant:
// compliance.OfTemplate) and its compliance Events on the Policy, which have
// the same reason, name and message format as the spoke's. Everything else
// above still runs. With OperatorPolicies left to OCM, the spoke releases the
// finalizer its own OperatorPolicy controller set (nothing would remove it),
// and template sync refuses an OperatorPolicy template that sets what OCM's
// controller would ignore (shared/operatorpolicy FleetpolicyOnly: fleetpolicy's
// spelling, the remove-on-deletion annotation) as a template error.
// OperatorPolicies can go to OCM only with the ConfigurationPolicies (OCM
// v0.19's controller always evaluates those); NewManager refuses the rest.
//
// Each controller's files carry its name: specsync.go, templatesync.go and
// templatesync_*.go (template sync and status sync: the reconcile, its
// status report, watches, event handlers and dependency registry),
// hubstatussync.go, secretsync.go; events.go is their compliance event
// writer; manager.go, setup.go and evaluator.go build the manager and wire
// the controllers. The ConfigurationPolicy and OperatorPolicy controllers are
// packages of their own (configpolicy, operatorpolicy).
//
// All state lives in API objects; a restarted spoke reconciles every policy
// and resumes.
package spoke
