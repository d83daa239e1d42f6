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
//     NonCompliant, never a crash. Before deleting a template, template sync
//     writes why on it (annotation fleetpolicy.io/deletion-cause:
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
//   - The ConfigurationPolicy controller resolves the managed-cluster templates
//     ({{ ... }}) of the object definitions (and builds the list of
//     object-templates-raw) against the managed cluster with OCM's library, as
//     shared/templates says, decrypting the values the hub encrypted with the
//     copied key; for a policy evaluated by watch, what the templates read is
//     watched (package templatewatch) and a change of it evaluates the policy
//     again. A template that cannot be
//     resolved makes its object template NonCompliant with the error, and
//     nothing is applied from it. The annotation
//     policy.open-cluster-management.io/disable-templates turns this off.
//     A policy template carrying the hub's
//     policy.open-cluster-management.io/hub-templates-error annotation is a
//     template error of template sync (NonCompliant with that message, not
//     created, removed if it was).
//   - The ConfigurationPolicy controller evaluates object templates
//     (musthave, mustonlyhave, mustnothave; namespaced objects in the
//     namespaces of namespaceSelector; an unnamed objectDefinition with an
//     objectSelector over the objects it lists with that label selector, as
//     configpolicy.JudgeSelection decides), enforces them when asked, writes
//     compliant, compliancyDetails, relatedObjects and lastEvaluatedGeneration,
//     and emits "Compliant; ..." / "NonCompliant; ..." compliance events on the
//     parent Policy when its verdict changes; an evaluation that creates a
//     missing object first says what it found ("NonCompliant; violation -
//     ... not found"), as OCM's history shows. An evaluation that finds an
//     object still at the resourceVersion the policy's own create or update
//     left keeps that write's words ("was created successfully"), so the
//     watch sending the policy its own write back says nothing new. spec.evaluationInterval says
//     when it evaluates again (configpolicy.EvaluatesByWatch,
//     NextEvaluation): by watch (the default, as OCM) it reads the objects,
//     lists and namespaces it evaluates through the templatewatch Resolver,
//     so that a change of them evaluates it again, and the watches it no
//     longer reads, or all of them when it is deleted or its interval is no
//     longer watch, are dropped; otherwise it reads the API server and is
//     evaluated again after the duration (never: on a change of its spec).
//   - A named (or selected) object that differs from its definition is
//     checked with a dry-run update, as OCM does. The diff
//     (configpolicy.RecordDiff) goes to the object's relatedObjects entry or
//     the log, as the object template's recordDiff says. An update the API
//     server refuses as invalid (an immutable field) is not made.
//     recreateOption IfRequired then deletes and recreates the object, and
//     Always does that instead of any update. Creation is retried while the
//     deleted object is still going, and the policy is evaluated again soon
//     when it is still there.
//   - The same controller prunes as OCM does (spec.pruneObjectBehavior,
//     docs/pruning.md): while it is DeleteIfCreated or DeleteAll the policy
//     holds the finalizer configpolicy.PruneFinalizer; when an enforce policy
//     is deleted, the objects configpolicy.PruneCandidates and DecidePrune
//     name are deleted (DeleteIfCreated: created by the policy, uid
//     unchanged; DeleteAll: every musthave/mustonlyhave object it saw; never
//     a mustnothave object), and so are those a complete evaluation no longer
//     relates to. A deletion that fails or hangs keeps the finalizer, reports
//     NonCompliant ("Error cleaning up child objects") and is retried. A
//     relatedObject remembers createdByPolicy and the uid created across
//     evaluations (configpolicy.CarryCreatedByPolicy). When the
//     ConfigurationPolicy CRD is being deleted (the spoke's uninstall), the
//     finalizers are removed and nothing is deleted or evaluated.
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
// All state lives in API objects; a restarted spoke reconciles every policy
// and resumes.
package spoke
