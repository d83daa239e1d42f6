// Package configpolicy is the comparison logic of a ConfigurationPolicy: which
// namespaces an object template applies to, whether an object on the cluster is
// as a template wants it, what enforcing it would write, and how the results
// read in the policy's status and compliance events. The spoke's
// ConfigurationPolicy controller reads the cluster, calls this package and
// writes what it decides.
//
// Contract:
//
//   - ParseComplianceType accepts musthave, mustonlyhave and mustnothave in any
//     capitalisation; the metadataComplianceType applies to labels and
//     annotations and defaults to the complianceType (musthave for mustnothave).
//   - SelectNamespaces picks namespaces as OCM does: include and exclude are
//     glob patterns (path.Match: *, ?, [...]); matchLabels and matchExpressions
//     filter on the namespace's labels; a selector with neither include nor a
//     label selector selects nothing. The result is sorted. A malformed pattern
//     or label selector is a *field.Error naming the field. A namespaced
//     object template left without a namespace (none selected, or a templated
//     one resolved to none) is NonCompliant with NoNamespaceMessage, OCM's
//     words, named or not.
//   - Compare checks an existing object against an object template's
//     objectDefinition. apiVersion, kind, metadata.name and metadata.namespace
//     identify the object and are not compared; labels and annotations are
//     compared with the metadata compliance type; every other top-level field is
//     compared. musthave: every field the template sets must be present with
//     that value (maps recursively; each item of a template list must match a
//     distinct item of the object's list). mustonlyhave: as musthave, and maps
//     and lists hold nothing more than the template sets. A missing field equals
//     an empty map, list or string. Numbers compare by value whatever their Go
//     type. Comparison.Merged is the object enforce writes: the existing object
//     with the template merged in (mustonlyhave: the template's fields replace
//     the object's), status kept as it was.
//   - ObjectSelector, SelectedName and JudgeSelection are an object
//     template's objectSelector, as OCM: it applies only when the
//     objectDefinition has no name ({} selects everything); each selected
//     object is judged as if the objectDefinition named it (musthave and
//     mustonlyhave: compared, updated on enforce, never created);
//     mustnothave judges only the selected objects matching the template and,
//     when none does, is compliant over every namespace, relating the
//     selected objects; nothing selected is compliant
//     (NothingSelectedMessage). Malformed selectors and a templated name
//     other than the selected object's are errors in OCM's words.
//   - Decide turns existence, a comparison, the compliance type and the
//     remediation action into a Verdict: compliant or not, the write to make
//     (create, update, delete or none) and the reason. Named mustnothave
//     objects are violations when they exist at all. A mismatch only under
//     status cannot be enforced and stays a violation.
//   - Describe and ComplianceMessage render results as OCM's compliance
//     events read: "configmaps [a, b] found as specified in namespace default",
//     "Compliant; notification - ..." / "NonCompliant; violation - ..."; a
//     result without a name reads without brackets ("configmaps missing as
//     expected in namespace x"). Within one object template the groups are in
//     OCM's order (createStatus): by reason (found as specified, created,
//     updated, deleted, not found, not as specified, missing as expected,
//     found; then failures, sorted by OCM's reason for them, one object
//     each), within a reason by namespaces (one before several), names
//     sorted; the objects an unnamed template matched in one namespace are
//     one name, as OCM's. ComplianceMessage keeps the templates in their
//     order (OCM's compliancyDetails).
//   - evaluationInterval, as OCM: ParseInterval reads a value ("watch" or
//     unset, "never", a duration); EvaluatesByWatch says whether an
//     evaluation reads through watches (the interval of the state the policy
//     was last found in is watch); NextEvaluation says what follows an
//     evaluation (keep the watches, evaluate again now or after a time).
//   - WithWholeRelatedObjects gives a custom message the whole related
//     objects of a policy evaluated by watch.
//   - Pruning (spec.pruneObjectBehavior), as OCM: CarryCreatedByPolicy keeps,
//     across evaluations, that the policy created an object and the uid it
//     created; PruneCandidates names the relatedObjects an enforce policy with
//     DeleteIfCreated or DeleteAll may delete (all of them on deletion, those
//     a new evaluation dropped otherwise; only entries with a uid, never
//     mustnothave objects); DecidePrune decides for one candidate given the
//     live object (DeleteAll: delete; DeleteIfCreated: only when created by
//     the policy with the same uid; an object already being deleted is
//     awaited); CleanupMessage words the failures. CreatedWithUID keeps an
//     object the policy recreates created by the policy when the one it
//     replaced was.
//   - Diffs (spec.object-templates[].recordDiff), as OCM: RecordingFor applies
//     the default (InStatus, but a redaction note for ConfigMap, Secret,
//     OAuthAccessToken, OAuthAuthorizeTokens and Route and for templates that
//     read sensitive data); RecordDiff renders a unified diff (go-difflib) of
//     the existing and the updated object as YAML, without managedFields,
//     generation and the last-applied annotation, cut past 50 lines, and says
//     whether it goes to the status or the log. Comparison.Expected is the
//     object a diff compares with when no dry-run update says better.
//   - Recreating (spec.object-templates[].recreateOption), as OCM:
//     HowToUpdate says whether enforce updates, recreates or cannot write an
//     object, given whether the API server refuses the update as invalid;
//     ImmutableMessage, RecreateTimeoutMessage, RecreateDeleteFailedMessage
//     and RecreateFailedMessage word the violations (Result.Message carries
//     them to Describe), and AwaitsRecreate says when to evaluate again at
//     once.
//
// Nothing here performs I/O or reads a clock, and no input makes it panic.
package configpolicy
