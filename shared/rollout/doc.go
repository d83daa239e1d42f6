// Package rollout plans and steps the progressive rollout of a policy's
// enforcement over a fleet (the root's spec.rolloutStrategy,
// examples/api/rollout.yaml), on top of OCM's rollout library
// (open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1
// RolloutHandler over an in-memory .../v1beta1 PlacementDecisionClustersTracker)
// and OCM's RolloutStrategy type (open-cluster-management.io/api/cluster/v1alpha1).
// The plan-rollout KRM function calls PlanWaves; the hub's rollout executor calls
// Step on every reconcile. The package is pure: it reads only its arguments, and
// the time is the caller's.
//
// # Strategy
//
// ResolveStrategy validates spec.rolloutStrategy and spells out its defaults: an
// empty type is All; progressDeadline "" is "None" (never time out);
// minSuccessTime and maxFailures default to 0; maxConcurrency unset, 0 or "0"
// means every non-mandatory cluster at once, as in OCM's rollout library (its
// fallback is the whole fleet). The hub and plan-rollout read it the same way,
// and both warn (a note: the hub's RolloutWarning condition, plan-rollout's
// warning result) when a Progressive rollout that enforces would thereby reach
// more than one cluster in a single wave. Each error names its field under the path
// the caller gives (spec.rolloutStrategy by default), all errors at once:
//   - type other than All, Progressive, ProgressivePerGroup (exact spelling);
//   - progressDeadline that is not "None" nor digits, a unit h/m/s and a Go
//     duration ("1d", "0", "1.5h" are rejected; "0s" times out at once);
//   - negative minSuccessTime;
//   - maxFailures or maxConcurrency negative, above 100%, fractional or not a
//     number or percentage; maxConcurrency "0%". Digits written as a string ("5")
//     become the integer (the CRD accepts them, the library would not);
//   - a block of another type than the type that holds a setting (it would be
//     ignored: a missing or wrong type, most likely);
//   - a negative mandatory groupIndex.
//
// # Fleet
//
// The fleet is the decision groups (placement, group name, group index,
// clusters) of every placement the policy is bound to. Each placement's indices
// must run from 0 without gaps with one name per index, and cluster names must
// not be empty; otherwise Step and PlanWaves fail naming the placement and group.
// The placements are merged, in name order, into one group list walked in order:
// placement by placement, group by group (the order ProgressivePerGroup walks;
// for All and Progressive the order only matters for mandatory groups, as
// clusters go in name order). A cluster decided by several
// groups or placements belongs to the first. A mandatory decision group given by
// groupName selects the groups of that name in every placement; one given by
// groupIndex selects that index in every placement.
//
// # Step
//
// The rollout is progressive when the root enforces and the type is not All.
// Otherwise every cluster gets the policy at once with its own action (the root's,
// or the binding override package binding resolved, given in
// ClusterState.RemediationAction), each is Progressing until its replica reports,
// and there is no second pass; a progressDeadline still times silent clusters
// out. A root that does not enforce enforces nothing. A progressive rollout
// ignores binding overrides, as package binding does.
//
// Per cluster, Step takes the stored Progress (status, last transition time, the
// root generation it belongs to), the compliance the replica reports and whether
// that report is current. A Progress of another generation, or a new cluster,
// starts again: ToApply, transition time now (ocm PR #1207: a stale transition
// time cut soaks short). A cluster the rollout reached takes this status:
// Progressing until its report is current; then Succeeded when compliant (or when
// its action does not enforce, on any report), Failed when non-compliant,
// Progressing while Pending. A TimeOut stays TimeOut until the cluster succeeds.
// The transition time moves to now whenever the status changes.
//
// OCM's rollout library is then called once with the reached clusters' statuses.
// The clusters it returns as ToApply are reached now: Progressing, the root's
// remediationAction, transition time now. Those it times out become TimeOut.
// Clusters not reached stay ToApply with remediationAction "inform". The root's
// rolloutStatus is Failed when the rollout is stopped by maxFailures, else
// Progressing while a cluster is ToApply or Progressing, else Failed if a cluster
// is Failed or TimeOut, else Succeeded (an empty fleet has succeeded). RequeueAfter
// is the library's RecheckAfter (the next soak end or deadline), or the
// progressDeadline when clusters were just reached and that is sooner. A cluster
// that joins after the rollout succeeded has no Progress, so the library reaches
// it in its turn: a miniature rollout, the root Progressing again. Clusters with
// a state but no longer in the fleet are listed in Removed. Reached lists the
// clusters reached at this step (not those Progressing again because their
// report is no longer current): the hub's RolloutWave Event names them.
//
// # The root's status
//
// The Progress of each cluster lives in the root policy's status[] entry
// (rolloutStatus, rolloutGeneration, rolloutLastTransitionTime): RootStatus
// writes it there with each bound cluster's compliance, and ClusterStates reads
// it back, with the replicas' reports, as the next step's ClusterStates.
//
// # Current reports
//
// Whether a replica's report is current (ClusterState.StatusCurrent) is
// ReportCurrent's rule, for both spokes: fleetpolicy's spoke writes
// status.observedGeneration, which must equal the replica's generation; OCM's
// framework add-on writes none, so every template's newest compliance history
// event (EvaluatedAt: the later of lastTimestamp and the time in the event's
// client-go name) must be later than the cluster's transition time while it is
// ToApply, Progressing or TimeOut; Succeeded and Failed, reached on a current
// report in this generation, stay current. The adapter also compares the
// replica's remediationAction with WrittenAction. docs/ocm-compatibility.md
// lists what the history cannot tell (clock skew, rewrites within a generation).
//
// # Plan
//
// PlanWaves computes the waves directly, in O(n log n): the sets of clusters the
// library returns call after call when every cluster succeeds at once and the
// clock moves past each soak (asking the library once per wave would be
// quadratic). Wave k starts at k × minSuccessTime. A differential test over
// seeded random fleets and strategies holds PlanWaves to the library, and to
// Step.
//
// # Library quirks and how they are guarded
//
//   - An empty type is an error in the library: ResolveStrategy makes it All.
//   - The library reads the time from its package variable RolloutClock and has
//     no parameter for it. This package never sets that variable, so steps of
//     different rollouts run in parallel (BenchmarkStepParallel): it answers the
//     library's two questions of time itself at the caller's now (is a succeeded
//     cluster still soaking, has a progressing or failed one passed its
//     deadline), hands the library transition times far enough in the past or
//     the future that any reading of its clock agrees, and computes RecheckAfter
//     at now. A differential test holds this to the library run with its clock
//     set to now.
//   - RolloutStatus is an integer enum there: this package speaks the API's
//     strings (ToApply, Progressing, Succeeded, Failed, TimeOut).
//   - Group indices with a gap make the library silently skip every group after
//     it: rejected. The merged group list is contiguous by construction.
//   - A Progressing or Failed cluster without a transition time never times out
//     (its deadline counts from every call's now): Step always records one.
//   - Given ToApply statuses, the library lets a cluster not reached yet take a
//     slot ahead of clusters in flight, which it then neither counts nor times
//     out: Step hands it only the clusters already reached.
//   - Once a mandatory cluster is stored as TimeOut, the library forgets the
//     mandatory groups' zero tolerance and moves on to the other groups: Step keeps
//     the rollout stopped (MaxFailureBreach, nothing newly reached) while a
//     mandatory cluster is Failed or TimeOut.
//   - The library sets no recheck time for clusters it has just chosen: Step adds
//     the progressDeadline to RequeueAfter, so an offline cluster still times out.
//   - An integer maxFailures above the clusters it is counted against (the whole
//     fleet for Progressive, each group for ProgressivePerGroup) silently becomes
//     0. This package keeps that behaviour, so that a manifest behaves as on an
//     OCM hub and a policy shared by fleets of different sizes keeps working (0 is
//     the safe direction: the rollout stops sooner), and explains it: Step and
//     PlanWaves return a note naming the field and the groups. The same notes say
//     when a mandatory decision group selects no group, and when maxConcurrency
//     (unset or 0) enforces on every cluster at once. A note is data (Note: the
//     field, a NoteReason, the decision groups concerned, a message without the
//     field): each exposure words it (plan-rollout: a warning on the field; the
//     hub: an Event and the RolloutWarning condition, Note.String) without
//     parsing text back apart.
//   - Documented, not guarded: mandatory groups ignore maxConcurrency and go one
//     group at a time, even for Progressive; All ignores minSuccessTime and
//     maxFailures (ResolveStrategy keeps them as written, the effective values are
//     0); a Failed cluster keeps its slot until its progressDeadline, forever with
//     None; with mandatory groups, a Progressive rollout waits for every cluster in
//     flight before choosing more, and reports a non-mandatory breach only then
//     (nothing new is enforced in between).
//
// Step's cost is dominated by its one library call: about 0.15 s at 10,000
// clusters (the library scans the fleet once per reached cluster), see
// BenchmarkStep. PlanWaves plans 10,000 clusters one at a time in about 10 ms,
// see BenchmarkPlan.
package rollout
