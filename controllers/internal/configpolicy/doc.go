// Package configpolicy is the spoke's ConfigurationPolicy controller: it runs
// on the managed cluster and evaluates, and when asked enforces, the
// ConfigurationPolicies template sync (package spoke) writes into the cluster
// namespace. It is a thin adapter: every decision is shared/configpolicy's
// (Compare, Decide, JudgeSelection, HowToUpdate, NextEvaluation,
// PruneCandidates, DecidePrune, the messages) and shared/templates'; this
// package reads the cluster, calls them and writes what they decide.
//
// Setup registers the controller on a manager of the managed cluster. One
// reconcile (reconcile.go) reads the policy, lets a deleted one go
// (removal.go), evaluates every object template (observe.go: named objects,
// objects an objectSelector selects, unnamed objects listed), makes the
// writes the verdicts ask for (enforce.go), prunes what a complete
// evaluation no longer relates to (removal.go) and, when the evaluation says
// something new, writes the compliance event on the parent Policy
// (events.go) and the status.
//
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
//   - The ConfigurationPolicy controller evaluates object templates
//     (musthave, mustonlyhave, mustnothave; namespaced objects in the
//     namespaces of namespaceSelector; an unnamed objectDefinition with an
//     objectSelector over the objects it lists with that label selector, as
//     shared/configpolicy JudgeSelection decides), enforces them when asked,
//     writes compliant, compliancyDetails, relatedObjects and lastEvaluatedGeneration,
//     and emits "Compliant; ..." / "NonCompliant; ..." compliance events on the
//     parent Policy when its verdict changes; an evaluation that creates a
//     missing object first says what it found ("NonCompliant; violation -
//     ... not found"), as OCM's history shows. An evaluation that finds an
//     object still at the resourceVersion the policy's own create or update
//     left keeps that write's words ("was created successfully"), so the
//     watch sending the policy its own write back says nothing new. spec.evaluationInterval says
//     when it evaluates again (shared/configpolicy EvaluatesByWatch,
//     NextEvaluation): by watch (the default, as OCM) it reads the objects,
//     lists and namespaces it evaluates through the templatewatch Resolver,
//     so that a change of them evaluates it again, and the watches it no
//     longer reads, or all of them when it is deleted or its interval is no
//     longer watch, are dropped; otherwise it reads the API server and is
//     evaluated again after the duration (never: on a change of its spec).
//   - A named (or selected) object that differs from its definition is
//     checked with a dry-run update, as OCM does. The diff
//     (shared/configpolicy RecordDiff) goes to the object's relatedObjects entry or
//     the log, as the object template's recordDiff says. An update the API
//     server refuses as invalid (an immutable field) is not made.
//     recreateOption IfRequired then deletes and recreates the object, and
//     Always does that instead of any update. Creation is retried while the
//     deleted object is still going, and the policy is evaluated again soon
//     when it is still there.
//   - The same controller prunes as OCM does (spec.pruneObjectBehavior,
//     docs/pruning.md): while it is DeleteIfCreated or DeleteAll the policy
//     holds the finalizer PruneFinalizer of shared/configpolicy; when an enforce policy
//     is deleted, the objects PruneCandidates and DecidePrune
//     name are deleted (DeleteIfCreated: created by the policy, uid
//     unchanged; DeleteAll: every musthave/mustonlyhave object it saw; never
//     a mustnothave object), and so are those a complete evaluation no longer
//     relates to. A deletion that fails or hangs keeps the finalizer, reports
//     NonCompliant ("Error cleaning up child objects") and is retried. A
//     relatedObject remembers createdByPolicy and the uid created across
//     evaluations (CarryCreatedByPolicy). When the
//     ConfigurationPolicy CRD is being deleted (the spoke's uninstall), the
//     finalizers are removed and nothing is deleted or evaluated.
//
// All state lives in API objects (the status's relatedObjects, the
// finalizer); what the controller keeps in memory (the last status written,
// the objects it wrote: ownWrites) only spares writes that would say
// nothing new.
package configpolicy
