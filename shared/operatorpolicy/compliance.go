package operatorpolicy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Condition types of an OperatorPolicy's status (OCM's, reference §1.4). The
// Subscription's own InstallPlan and bundle conditions (InstallPlanPending, …)
// are copied under OLM's type names.
const (
	TypeCompliant                         = "Compliant"
	TypeValidPolicySpec                   = "ValidPolicySpec"
	TypeOperatorGroupCompliant            = "OperatorGroupCompliant"
	TypeSubscriptionCompliant             = "SubscriptionCompliant"
	TypeInstallPlanCompliant              = "InstallPlanCompliant"
	TypeClusterServiceVersionCompliant    = "ClusterServiceVersionCompliant"
	TypeCustomResourceDefinitionCompliant = "CustomResourceDefinitionCompliant"
	TypeAPIServiceCompliant               = "APIServiceCompliant"
	TypeDeploymentCompliant               = "DeploymentCompliant"
	TypeCatalogSourcesUnhealthy           = "CatalogSourcesUnhealthy"
	TypeNoDeprecations                    = "NoDeprecations"
	TypeMinorChannelUpgradeAvailable      = "MinorChannelUpgradeAvailable"
)

// copiedSubscriptionConditions are the Subscription condition types copied into
// the policy's status as they are. They never decide compliance.
var copiedSubscriptionConditions = []operatorsv1alpha1.SubscriptionConditionType{
	operatorsv1alpha1.SubscriptionInstallPlanPending,
	operatorsv1alpha1.SubscriptionInstallPlanMissing,
	operatorsv1alpha1.SubscriptionInstallPlanFailed,
	operatorsv1alpha1.SubscriptionBundleUnpacking,
	operatorsv1alpha1.SubscriptionBundleUnpackFailed,
}

// Related object reasons (ConfigurationPolicy's strings where OCM reuses them,
// fleetpolicy's own for InstallPlans).
const (
	relatedFound          = "Resource found as expected"
	relatedCreated        = "K8s creation success"
	relatedMismatch       = "Resource found but does not match"
	relatedMissing        = "Resource not found but should exist"
	relatedPresent        = "Resource found but should not exist"
	relatedNotApproved    = "InstallPlan not approved"
	relatedUnknownState   = "Resource found but current state is unknown"
	relatedAvailable      = "Deployment Available"
	relatedUnavailable    = "Deployment Unavailable"
	relatedUnapproved     = "Resource found but is not an approved version"
	relatedResolutionFail = "Resource found but its dependencies cannot be resolved"
)

const (
	notCausingNonCompliance = " but not causing noncompliance"
	notEnforced             = " because the policy is not enforced"
	catalogReady            = "READY"
)

// Created says which objects the caller has just created for the policy, so
// that the status says "created" rather than "matches".
type Created struct {
	OperatorGroup bool
	Subscription  bool
}

// PreviouslyCreated reads from a policy's status.relatedObjects (as Evaluate
// wrote them) which of p's OperatorGroup and Subscription the policy created:
// those related with createdByPolicy under the name p still wants
// (OperatorGroupName, the package) in the subscription's namespace.
func PreviouslyCreated(related []policyv1.RelatedObject, p Policy) Created {
	var out Created
	for _, ro := range related {
		if ro.Properties == nil || ro.Properties.CreatedByPolicy == nil || !*ro.Properties.CreatedByPolicy ||
			ro.Object.Metadata.Namespace != p.Subscription.Namespace {
			continue
		}
		switch ro.Object.Kind {
		case operatorsv1alpha1.SubscriptionKind:
			out.Subscription = out.Subscription || ro.Object.Metadata.Name == p.Subscription.Package
		case operatorsv1.OperatorGroupKind:
			out.OperatorGroup = out.OperatorGroup || ro.Object.Metadata.Name == OperatorGroupName(p)
		}
	}
	return out
}

// Observed is what the caller read from the cluster for one policy. Objects
// outside the subscription's namespace are ignored.
type Observed struct {
	// OperatorGroups in the subscription's namespace.
	OperatorGroups []operatorsv1.OperatorGroup
	// Subscriptions in the subscription's namespace; the policy's is the one named
	// after its package.
	Subscriptions []operatorsv1alpha1.Subscription
	// InstallPlans in the subscription's namespace.
	InstallPlans []operatorsv1alpha1.InstallPlan
	// ClusterServiceVersions in the subscription's namespace.
	ClusterServiceVersions []operatorsv1alpha1.ClusterServiceVersion
	// Deployments in the subscription's namespace.
	Deployments []appsv1.Deployment
	// CatalogSource is the subscription's source; nil when it does not exist.
	CatalogSource *operatorsv1alpha1.CatalogSource
	// InstallModes of the operator; nil when unknown (the installed CSV's are used
	// then, when there is one).
	InstallModes []operatorsv1alpha1.InstallMode
	// Channels of the package (from its PackageManifest); nil when unknown.
	Channels []string
	Created  Created
}

// Evaluation is a policy's status and compliance event as computed from what
// was observed.
type Evaluation struct {
	Compliance policyv1.ComplianceState
	// Conditions: Compliant first, then the others in a fixed order.
	Conditions []metav1.Condition
	// RelatedObjects sorted by kind, namespace and name.
	RelatedObjects []policyv1.RelatedObject
	// EventMessage is the compliance event's message: "Compliant; " or
	// "NonCompliant; " and the condition messages, most recent transition first.
	EventMessage string
}

// conditionKind says how a condition's status reads.
type conditionKind int

const (
	// complianceCondition is True when the policy is compliant on its account;
	// a tolerated problem still reads True.
	complianceCondition conditionKind = iota
	// problemFact is True when the problem is there, whatever its effect.
	problemFact
	// healthFact is False when the problem is there, whatever its effect.
	healthFact
)

type finding struct {
	condition    metav1.Condition
	nonCompliant bool
	// messageOnly findings appear in the event message but not as conditions.
	messageOnly bool
	// informative findings never decide compliance.
	informative bool
}

type evaluator struct {
	p        Policy
	obs      Observed
	findings []finding
	related  []policyv1.RelatedObject
	sub      *operatorsv1alpha1.Subscription
}

// Evaluate computes the status of a valid policy from what was observed.
// Conditions keep their lastTransitionTime from previous while their status is
// unchanged, and take now otherwise. A policy removing its operator is
// evaluated against its removal plan (PlanRemoval): compliant once nothing it
// deletes is left.
func Evaluate(p Policy, obs Observed, previous []metav1.Condition, now time.Time) Evaluation {
	e := &evaluator{p: p, obs: obs, sub: OwnSubscription(p, obs.Subscriptions)}
	e.add(finding{condition: metav1.Condition{
		Type: TypeValidPolicySpec, Status: metav1.ConditionTrue, Reason: "PolicyValidated", Message: "the policy spec is valid",
	}})
	if p.Remove {
		e.removal()
	} else {
		csv := e.relevantCSV()
		e.operatorGroup(csv)
		e.subscription()
		e.installPlan()
		e.clusterServiceVersion(csv)
		e.deployments(csv)
		e.catalogSource()
		e.deprecations()
		e.minorChannel()
		e.copiedSubscriptionConditions()
	}
	return e.finish(previous, now)
}

// EvaluateInvalid is the status of a policy Normalize rejected with err.
func EvaluateInvalid(err error, previous []metav1.Condition, now time.Time) Evaluation {
	message := "the policy is invalid"
	if err != nil {
		message = err.Error()
	}
	e := &evaluator{}
	e.add(finding{condition: metav1.Condition{
		Type: TypeValidPolicySpec, Status: metav1.ConditionFalse, Reason: "InvalidPolicySpec", Message: message,
	}, nonCompliant: true})
	return e.finish(previous, now)
}

func (e *evaluator) add(f finding) { e.findings = append(e.findings, f) }

// governed adds a finding whose weight on compliance is the policy's effect.
// A tolerated problem (effect other than NonCompliant) says so in its message,
// and with StatusMessageOnly it is left out of the conditions.
func (e *evaluator) governed(typ string, kind conditionKind, effect Effect, problem bool, reason, message string) {
	tolerated := problem && effect != EffectNonCompliant
	if tolerated {
		message += notCausingNonCompliance
	}
	var status metav1.ConditionStatus
	switch kind {
	case complianceCondition:
		status = conditionStatus(!problem || tolerated)
	case problemFact:
		status = conditionStatus(problem)
	case healthFact:
		status = conditionStatus(!problem)
	}
	e.add(finding{
		condition:    metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message},
		nonCompliant: problem && !tolerated,
		messageOnly:  tolerated && effect == EffectMessageOnly,
	})
}

// fixed adds a finding that always decides compliance by its status.
func (e *evaluator) fixed(typ string, ok bool, reason, message string) {
	e.add(finding{condition: metav1.Condition{Type: typ, Status: conditionStatus(ok), Reason: reason, Message: message}, nonCompliant: !ok})
}

func conditionStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

func (e *evaluator) relate(kind, apiVersion, namespace, name string, compliant bool, reason string) {
	state := policyv1.NonCompliant
	if compliant {
		state = policyv1.Compliant
	}
	e.relateWith(kind, apiVersion, namespace, name, string(state), reason, nil)
}

func (e *evaluator) relateWith(kind, apiVersion, namespace, name, compliant, reason string, props *policyv1.ObjectProperties) {
	e.related = append(e.related, policyv1.RelatedObject{
		Object:     policyv1.ObjectResource{Kind: kind, APIVersion: apiVersion, Metadata: policyv1.ObjectMetadata{Name: name, Namespace: namespace}},
		Compliant:  compliant,
		Reason:     reason,
		Properties: props,
	})
}

func (e *evaluator) namespace() string { return e.p.Subscription.Namespace }

func (e *evaluator) operatorGroup(csv *operatorsv1alpha1.ClusterServiceVersion) {
	const kind = operatorsv1.OperatorGroupKind
	apiVersion := operatorGroupType.APIVersion
	var existing []*operatorsv1.OperatorGroup
	for i := range e.obs.OperatorGroups {
		if og := &e.obs.OperatorGroups[i]; og.Namespace == e.namespace() {
			existing = append(existing, og)
		}
	}
	modes := e.obs.InstallModes
	if modes == nil && csv != nil {
		modes = csv.Spec.InstallModes
	}
	want, err := DesiredOperatorGroup(e.p, e.obs.OperatorGroups, modes)
	var conflict *OperatorGroupConflict
	if errors.As(err, &conflict) {
		for _, og := range existing {
			e.relate(kind, apiVersion, og.Namespace, og.Name, false, relatedMismatch)
		}
		e.fixed(TypeOperatorGroupCompliant, false, conflict.Reason, conflict.Detail)
		return
	}
	if want == nil {
		og := existing[0]
		e.relate(kind, apiVersion, og.Namespace, og.Name, true, relatedFound)
		e.fixed(TypeOperatorGroupCompliant, true, "PreexistingOperatorGroupFound",
			"the policy does not specify an OperatorGroup but one already exists in the namespace - assuming that OperatorGroup is correct")
		return
	}
	var found *operatorsv1.OperatorGroup
	for _, og := range existing {
		if og.Name == want.Name {
			found = og
		}
	}
	switch diff := operatorGroupDiff(want, found, e.p.OperatorGroup); {
	case found == nil:
		e.relate(kind, apiVersion, want.Namespace, want.Name, false, relatedMissing)
		e.fixed(TypeOperatorGroupCompliant, false, "OperatorGroupMissing", e.missingMessage(kind))
	case len(diff) > 0:
		e.relate(kind, apiVersion, found.Namespace, found.Name, false, relatedMismatch)
		e.fixed(TypeOperatorGroupCompliant, false, ReasonOperatorGroupMismatch, e.mismatchMessage(kind, diff))
	case e.obs.Created.OperatorGroup:
		e.relateWith(kind, apiVersion, found.Namespace, found.Name, string(policyv1.Compliant), relatedCreated, createdByPolicy())
		e.fixed(TypeOperatorGroupCompliant, true, "OperatorGroupCreated", "the OperatorGroup required by the policy was created")
	default:
		e.relate(kind, apiVersion, found.Namespace, found.Name, true, relatedFound)
		e.fixed(TypeOperatorGroupCompliant, true, "OperatorGroupMatches", "the OperatorGroup matches what is required by the policy")
	}
}

// operatorGroupDiff names the fields of have that differ from want;
// upgradeStrategy and staticProvidedAPIs only when named (the policy's
// OperatorGroup, nil when it names none) sets them.
func operatorGroupDiff(want, have *operatorsv1.OperatorGroup, named *OperatorGroup) []string {
	if have == nil {
		return nil
	}
	var diff []string
	wantNS, haveNS := slices.Clone(want.Spec.TargetNamespaces), slices.Clone(have.Spec.TargetNamespaces)
	slices.Sort(wantNS)
	slices.Sort(haveNS)
	if !slices.Equal(slices.Compact(wantNS), slices.Compact(haveNS)) {
		diff = append(diff, "targetNamespaces")
	}
	if !equality.Semantic.DeepEqual(emptySelectorIsNil(want.Spec.Selector), emptySelectorIsNil(have.Spec.Selector)) {
		diff = append(diff, "selector")
	}
	if want.Spec.ServiceAccountName != "" && want.Spec.ServiceAccountName != have.Spec.ServiceAccountName {
		diff = append(diff, "serviceAccountName")
	}
	if named != nil && named.UpgradeStrategy != "" && named.UpgradeStrategy != have.UpgradeStrategy() {
		diff = append(diff, "upgradeStrategy")
	}
	if named != nil && named.StaticProvidedAPIs != nil && *named.StaticProvidedAPIs != have.Spec.StaticProvidedAPIs {
		diff = append(diff, "staticProvidedAPIs")
	}
	return diff
}

func emptySelectorIsNil(s *metav1.LabelSelector) *metav1.LabelSelector {
	if s != nil && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return nil
	}
	return s
}

func (e *evaluator) missingMessage(kind string) string {
	message := fmt.Sprintf("the %s required by the policy was not found", kind)
	if !e.p.Enforce {
		message += " and is not created" + notEnforced
	}
	return message
}

func (e *evaluator) mismatchMessage(kind string, diff []string) string {
	message := fmt.Sprintf("the %s found on the cluster does not match the policy (%s)", kind, strings.Join(diff, ", "))
	if !e.p.Enforce {
		message += " and is not updated" + notEnforced
	}
	return message
}

func createdByPolicy() *policyv1.ObjectProperties {
	created := true
	return &policyv1.ObjectProperties{CreatedByPolicy: &created}
}

func (e *evaluator) subscription() {
	const kind = operatorsv1alpha1.SubscriptionKind
	apiVersion := subscriptionType.APIVersion
	want := DesiredSubscription(e.p)
	sub := e.sub
	if sub == nil {
		e.relate(kind, apiVersion, want.Namespace, want.Name, false, relatedMissing)
		e.fixed(TypeSubscriptionCompliant, false, "SubscriptionMissing", e.missingMessage(kind))
		return
	}
	if diff := subscriptionDiff(want.Spec, sub.Spec, e.p.Enforce); len(diff) > 0 {
		e.relate(kind, apiVersion, sub.Namespace, sub.Name, false, relatedMismatch)
		e.fixed(TypeSubscriptionCompliant, false, "SubscriptionMismatch", e.mismatchMessage(kind, diff))
		return
	}
	if reason, message, failed := resolutionFailure(sub, e.p.Subscription.Package); failed {
		e.relate(kind, apiVersion, sub.Namespace, sub.Name, false, relatedResolutionFail)
		e.fixed(TypeSubscriptionCompliant, false, reason, message)
		return
	}
	if e.obs.Created.Subscription {
		e.relateWith(kind, apiVersion, sub.Namespace, sub.Name, string(policyv1.Compliant), relatedCreated, createdByPolicy())
		e.fixed(TypeSubscriptionCompliant, true, "SubscriptionCreated", "the Subscription required by the policy was created")
		return
	}
	e.relate(kind, apiVersion, sub.Namespace, sub.Name, true, relatedFound)
	e.fixed(TypeSubscriptionCompliant, true, "SubscriptionMatches", "the Subscription matches what is required by the policy")
}

// subscriptionDiff names the fields of have that differ from want. Fields want
// leaves empty are not compared; installPlanApproval only when enforcing.
func subscriptionDiff(want, have *operatorsv1alpha1.SubscriptionSpec, enforce bool) []string {
	if have == nil {
		return []string{"spec"}
	}
	var diff []string
	for _, f := range []struct{ name, want, have string }{
		{"name", want.Package, have.Package},
		{"source", want.CatalogSource, have.CatalogSource},
		{"sourceNamespace", want.CatalogSourceNamespace, have.CatalogSourceNamespace},
		{"channel", want.Channel, have.Channel},
		{"startingCSV", want.StartingCSV, have.StartingCSV},
	} {
		if f.want != "" && f.want != f.have {
			diff = append(diff, f.name)
		}
	}
	if enforce {
		haveApproval := have.InstallPlanApproval
		if haveApproval == "" {
			haveApproval = operatorsv1alpha1.ApprovalAutomatic
		}
		if haveApproval != want.InstallPlanApproval {
			diff = append(diff, "installPlanApproval")
		}
	}
	if want.Config != nil && !equality.Semantic.DeepEqual(want.Config, have.Config) {
		diff = append(diff, "config")
	}
	return diff
}

const reasonConstraintsNotSatisfiable = "ConstraintsNotSatisfiable"

// resolutionFailure reads the Subscription's ResolutionFailed condition. OLM
// puts an unsatisfiable-constraints failure on every Subscription of the
// namespace, so that one counts only when its message names the package, and
// its (unstable) message is replaced by a fixed one.
func resolutionFailure(sub *operatorsv1alpha1.Subscription, pkg string) (string, string, bool) {
	cond := sub.Status.GetCondition(operatorsv1alpha1.SubscriptionResolutionFailed)
	if cond.Status != corev1.ConditionTrue {
		return "", "", false
	}
	if cond.Reason == reasonConstraintsNotSatisfiable {
		if !strings.Contains(cond.Message, pkg) {
			return "", "", false
		}
		return reasonConstraintsNotSatisfiable, "constraints not satisfiable: refer to the Subscription for more details", true
	}
	message := cond.Message
	if message == "" {
		message = "the Subscription's dependencies could not be resolved"
	}
	return conditionReason(cond.Reason, string(operatorsv1alpha1.SubscriptionResolutionFailed)), message, true
}

func (e *evaluator) installedAndCurrentCSV() (string, string) {
	if e.sub == nil {
		return "", ""
	}
	return e.sub.Status.InstalledCSV, e.sub.Status.CurrentCSV
}

func (e *evaluator) installPlan() {
	const kind = operatorsv1alpha1.InstallPlanKind
	apiVersion := subscriptionType.APIVersion
	installed, current := e.installedAndCurrentCSV()
	plan := relevantInstallPlan(e.obs.InstallPlans, e.namespace(), installed, current)
	if plan == nil {
		e.fixed(TypeInstallPlanCompliant, true, "NoInstallPlansFound", "there are no relevant InstallPlans in the namespace")
		return
	}
	csvs := strings.Join(plan.Spec.ClusterServiceVersionNames, ", ")
	phase := plan.Status.Phase
	relate := func(compliant bool, reason string) {
		e.relate(kind, apiVersion, plan.Namespace, plan.Name, compliant, reason)
	}
	switch {
	case phase == operatorsv1alpha1.InstallPlanPhaseInstalling:
		e.governed(TypeInstallPlanCompliant, complianceCondition, e.p.Effects.UpgradesProgressing, true,
			"InstallPlansInstalling", fmt.Sprintf("the InstallPlan for %s is installing", csvs))
		relate(e.p.Effects.UpgradesProgressing != EffectNonCompliant, "The InstallPlan is Installing")
	case phase == operatorsv1alpha1.InstallPlanPhaseFailed:
		e.fixed(TypeInstallPlanCompliant, false, "InstallPlanFailed", fmt.Sprintf("the InstallPlan for %s failed", csvs))
		relate(false, "The InstallPlan is Failed")
	case phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval || (installed != "" && installed == current):
		e.fixed(TypeInstallPlanCompliant, true, "NoInstallPlansRequiringApproval", "no InstallPlans requiring approval were found")
		relate(true, fmt.Sprintf("The InstallPlan is %s", phase))
	case plan.Spec.Approved:
		e.fixed(TypeInstallPlanCompliant, true, "InstallPlanApproved", fmt.Sprintf("the InstallPlan for %s was approved", csvs))
		relate(true, "The InstallPlan was approved")
	case installed == "":
		message := fmt.Sprintf("the InstallPlan to install %s requires approval", csvs)
		if !e.p.Enforce {
			message += " and is not approved" + notEnforced
		} else if refused := e.notAllowed(plan.Spec.ClusterServiceVersionNames); len(refused) > 0 {
			message += fmt.Sprintf(", but the policy does not allow %s", strings.Join(refused, ", "))
		}
		e.fixed(TypeInstallPlanCompliant, false, "InstallPlanRequiresApproval", message)
		relate(false, relatedNotApproved)
	default:
		target := current
		if target == "" {
			target = csvs
		}
		message := fmt.Sprintf("an upgrade to %s is available", target)
		if spec := e.sub.Spec; spec != nil && spec.Channel != "" {
			message += fmt.Sprintf(" on the %s channel", spec.Channel)
		}
		e.governed(TypeInstallPlanCompliant, complianceCondition, e.p.Effects.UpgradesAvailable, true, "UpgradeAvailable", message)
		relate(false, relatedNotApproved)
	}
}

func (e *evaluator) notAllowed(csvs []string) []string {
	var refused []string
	for _, csv := range csvs {
		if !e.p.Allowed.Allows(csv) {
			refused = append(refused, csv)
		}
	}
	return refused
}

// relevantInstallPlan is the InstallPlan of the namespace for the current or
// installed CSV: one for the current CSV that is installing or complete, else
// the one of highest generation (then name).
func relevantInstallPlan(plans []operatorsv1alpha1.InstallPlan, namespace, installed, current string) *operatorsv1alpha1.InstallPlan {
	var best *operatorsv1alpha1.InstallPlan
	for i := range plans {
		plan := &plans[i]
		names := plan.Spec.ClusterServiceVersionNames
		hasCurrent := current != "" && slices.Contains(names, current)
		if plan.Namespace != namespace || !(hasCurrent || (installed != "" && slices.Contains(names, installed))) {
			continue
		}
		if hasCurrent && (plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseInstalling || plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete) {
			return plan
		}
		if best == nil || cmp.Or(cmp.Compare(plan.Spec.Generation, best.Spec.Generation), cmp.Compare(plan.Name, best.Name)) > 0 {
			best = plan
		}
	}
	return best
}

// relevantCSV is the policy's installed CSV (or, before the install, its
// current one) when present in the namespace and not a copy.
func (e *evaluator) relevantCSV() *operatorsv1alpha1.ClusterServiceVersion {
	name := e.csvName()
	for i := range e.obs.ClusterServiceVersions {
		csv := &e.obs.ClusterServiceVersions[i]
		if name != "" && csv.Name == name && csv.Namespace == e.namespace() && !csv.IsCopied() {
			return csv
		}
	}
	return nil
}

func (e *evaluator) csvName() string {
	installed, current := e.installedAndCurrentCSV()
	return cmp.Or(installed, current)
}

func (e *evaluator) clusterServiceVersion(csv *operatorsv1alpha1.ClusterServiceVersion) {
	const kind = operatorsv1alpha1.ClusterServiceVersionKind
	apiVersion := subscriptionType.APIVersion
	name := e.csvName()
	switch {
	case name == "":
		e.fixed(TypeClusterServiceVersionCompliant, false, "RelevantCSVNotFound", "a relevant installed ClusterServiceVersion could not be found")
	case csv == nil:
		e.relate(kind, apiVersion, e.namespace(), name, false, relatedMissing)
		e.fixed(TypeClusterServiceVersionCompliant, false, "ClusterServiceVersionMissing",
			fmt.Sprintf("the ClusterServiceVersion (%s) required by the policy was not found", name))
	case !e.p.Allowed.Allows(name):
		e.relate(kind, apiVersion, csv.Namespace, csv.Name, false, relatedUnapproved)
		e.fixed(TypeClusterServiceVersionCompliant, false, "UnapprovedVersion",
			fmt.Sprintf("ClusterServiceVersion (%s) is not an approved version", name))
	default:
		succeeded := csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded
		detail := cmp.Or(csv.Status.Message, "phase "+cmp.Or(string(csv.Status.Phase), "unknown"))
		fallback := "ClusterServiceVersionNotSucceeded"
		if succeeded {
			fallback = string(operatorsv1alpha1.CSVReasonInstallSuccessful)
		}
		reason := conditionReason(string(csv.Status.Reason), fallback)
		related := relatedFound
		if !succeeded {
			related = fmt.Sprintf("Resource found but its phase is %s", cmp.Or(string(csv.Status.Phase), "unknown"))
		}
		e.relate(kind, apiVersion, csv.Namespace, csv.Name, succeeded, related)
		e.fixed(TypeClusterServiceVersionCompliant, succeeded, reason, fmt.Sprintf("ClusterServiceVersion (%s) - %s", name, detail))
	}
}

func (e *evaluator) deployments(csv *operatorsv1alpha1.ClusterServiceVersion) {
	const kind = "Deployment"
	apiVersion := appsv1.SchemeGroupVersion.String()
	effect := e.p.Effects.DeploymentsUnavailable
	if csv == nil {
		e.fixed(TypeDeploymentCompliant, true, "NoRelevantDeployments", "there are no relevant deployments because the ClusterServiceVersion is missing")
		return
	}
	specs := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(specs) == 0 {
		e.fixed(TypeDeploymentCompliant, true, "NoExistingDeployments", "the ClusterServiceVersion lists no deployments")
		return
	}
	var unavailable []string
	for _, spec := range specs {
		d := findDeployment(e.obs.Deployments, csv.Namespace, spec.Name)
		switch {
		case d == nil:
			unavailable = append(unavailable, spec.Name)
			e.relate(kind, apiVersion, csv.Namespace, spec.Name, false, relatedMissing)
		case !deploymentAvailable(d):
			unavailable = append(unavailable, spec.Name)
			e.relate(kind, apiVersion, csv.Namespace, spec.Name, false, relatedUnavailable)
		default:
			e.relate(kind, apiVersion, csv.Namespace, spec.Name, true, relatedAvailable)
		}
	}
	if len(unavailable) == 0 {
		e.governed(TypeDeploymentCompliant, complianceCondition, effect, false, "DeploymentsAvailable", "all operator Deployments have their minimum availability")
		return
	}
	e.governed(TypeDeploymentCompliant, complianceCondition, effect, true, "DeploymentsUnavailable",
		fmt.Sprintf("the deployments %s do not have their minimum availability", strings.Join(unavailable, ", ")))
}

func findDeployment(deployments []appsv1.Deployment, namespace, name string) *appsv1.Deployment {
	for i := range deployments {
		if d := &deployments[i]; d.Namespace == namespace && d.Name == name {
			return d
		}
	}
	return nil
}

// deploymentAvailable: no unavailable replicas and no Available=False condition.
func deploymentAvailable(d *appsv1.Deployment) bool {
	if d.Status.UnavailableReplicas > 0 {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse {
			return false
		}
	}
	return true
}

func (e *evaluator) catalogSource() {
	const kind = operatorsv1alpha1.CatalogSourceKind
	apiVersion := subscriptionType.APIVersion
	name, namespace := e.p.Subscription.Source, e.p.Subscription.SourceNamespace
	if e.sub != nil && e.sub.Spec != nil {
		name, namespace = cmp.Or(name, e.sub.Spec.CatalogSource), cmp.Or(namespace, e.sub.Spec.CatalogSourceNamespace)
	}
	if name == "" {
		return
	}
	cs := e.obs.CatalogSource
	effect := e.p.Effects.CatalogSourceUnhealthy
	switch {
	case cs == nil || cs.Name != name || (namespace != "" && cs.Namespace != namespace):
		e.relate(kind, apiVersion, namespace, name, false, relatedMissing)
		e.governed(TypeCatalogSourcesUnhealthy, problemFact, effect, true, "CatalogSourcesNotFound", fmt.Sprintf("CatalogSource '%s' was not found", name))
	case cs.Status.GRPCConnectionState == nil:
		e.relate(kind, apiVersion, cs.Namespace, cs.Name, false, relatedUnknownState)
		e.governed(TypeCatalogSourcesUnhealthy, problemFact, effect, true, "CatalogSourcesUnknownState", fmt.Sprintf("the state of CatalogSource '%s' is unknown", name))
	case cs.Status.GRPCConnectionState.LastObservedState != catalogReady:
		state := cs.Status.GRPCConnectionState.LastObservedState
		e.relate(kind, apiVersion, cs.Namespace, cs.Name, false, fmt.Sprintf("Resource found but its state is %s", state))
		e.governed(TypeCatalogSourcesUnhealthy, problemFact, effect, true, "CatalogSourcesFoundUnhealthy",
			fmt.Sprintf("CatalogSource '%s' is unhealthy (state %s)", name, state))
	default:
		e.relate(kind, apiVersion, cs.Namespace, cs.Name, true, relatedFound)
		e.governed(TypeCatalogSourcesUnhealthy, problemFact, effect, false, "CatalogSourcesFound", "CatalogSource was found")
	}
}

// deprecationConditions are the Subscription's specific deprecation conditions;
// its summary Deprecated condition is used only when none of them is set.
var deprecationConditions = []operatorsv1alpha1.SubscriptionConditionType{
	operatorsv1alpha1.SubscriptionPackageDeprecated,
	operatorsv1alpha1.SubscriptionChannelDeprecated,
	operatorsv1alpha1.SubscriptionBundleDeprecated,
}

func (e *evaluator) deprecations() {
	if e.sub == nil {
		return
	}
	var reasons, messages []string
	collect := func(t operatorsv1alpha1.SubscriptionConditionType) {
		if c := e.sub.Status.GetCondition(t); c.Status == corev1.ConditionTrue {
			reasons = append(reasons, string(t))
			messages = append(messages, cmp.Or(c.Message, fmt.Sprintf("the Subscription has condition %s", t)))
		}
	}
	for _, t := range deprecationConditions {
		collect(t)
	}
	if len(reasons) == 0 {
		collect(operatorsv1alpha1.SubscriptionDeprecated)
	}
	effect := e.p.Effects.DeprecationsPresent
	if len(reasons) == 0 {
		e.governed(TypeNoDeprecations, healthFact, effect, false, "NoDeprecations", "there are no relevant deprecations")
		return
	}
	e.governed(TypeNoDeprecations, healthFact, effect, true, reasons[0], strings.Join(messages, "; "))
}

func (e *evaluator) minorChannel() {
	if e.obs.Channels == nil || e.p.Approval != operatorsv1alpha1.ApprovalAutomatic {
		return
	}
	channel := e.p.Subscription.Channel
	if e.sub != nil && e.sub.Spec != nil {
		channel = cmp.Or(e.sub.Spec.Channel, channel)
	}
	current, ok := parseMinorChannel(channel)
	if !ok {
		return
	}
	newest := current
	for _, name := range e.obs.Channels {
		if c, ok := parseMinorChannel(name); ok && c.sameLine(current) && c.minor > newest.minor {
			newest = c
		}
	}
	effect := e.p.Effects.MinorChannelUpgradeAvailable
	if newest == current {
		e.governed(TypeMinorChannelUpgradeAvailable, problemFact, effect, false, "LatestMinorChannel",
			fmt.Sprintf("the subscribed channel %s is the latest minor channel", channel))
		return
	}
	e.governed(TypeMinorChannelUpgradeAvailable, problemFact, effect, true, "MinorChannelUpgradeAvailable",
		fmt.Sprintf("a newer minor channel %s is available for the subscribed channel %s", newest.name, channel))
}

// minorChannel is a channel named <prefix><major>.<minor>[.x], e.g. stable-1.4.
type minorChannel struct {
	name, prefix, suffix string
	major, minor         int
}

func (c minorChannel) sameLine(o minorChannel) bool {
	return c.prefix == o.prefix && c.major == o.major && c.suffix == o.suffix
}

func parseMinorChannel(name string) (minorChannel, bool) {
	c := minorChannel{name: name}
	rest := strings.TrimSuffix(name, ".x")
	if rest != name {
		c.suffix = ".x"
	}
	digits := strings.IndexFunc(rest, func(r rune) bool { return r >= '0' && r <= '9' })
	if digits < 0 {
		return c, false
	}
	c.prefix = rest[:digits]
	if strings.IndexFunc(c.prefix, func(r rune) bool { return !(r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) }) >= 0 {
		return c, false
	}
	major, minor, found := strings.Cut(rest[digits:], ".")
	var ok bool
	if c.major, ok = smallNumber(major); !ok || !found {
		return c, false
	}
	c.minor, ok = smallNumber(minor)
	return c, ok
}

// smallNumber parses 1 to 9 decimal digits.
func smallNumber(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}

func (e *evaluator) copiedSubscriptionConditions() {
	if e.sub == nil {
		return
	}
	for _, t := range copiedSubscriptionConditions {
		for _, c := range e.sub.Status.Conditions {
			if c.Type != t {
				continue
			}
			status := metav1.ConditionStatus(c.Status)
			if status != metav1.ConditionTrue && status != metav1.ConditionFalse {
				status = metav1.ConditionUnknown
			}
			e.add(finding{condition: metav1.Condition{
				Type: string(t), Status: status, Reason: conditionReason(c.Reason, string(t)), Message: c.Message,
			}, informative: true})
			break
		}
	}
}

// conditionReason is reason when it is a valid condition reason, else fallback.
func conditionReason(reason, fallback string) string {
	if reason == "" || len(reason) > 1024 {
		return fallback
	}
	for i, r := range reason {
		letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		inner := letter || (r >= '0' && r <= '9') || r == '_' || r == ',' || r == ':'
		last := i == len(reason)-1
		if (i == 0 && !letter) || !inner || (last && (r == ',' || r == ':')) {
			return fallback
		}
	}
	return reason
}

// finish orders the findings, stamps transition times and rolls them up.
func (e *evaluator) finish(previous []metav1.Condition, now time.Time) Evaluation {
	type ordered struct {
		finding
		index int
		at    metav1.Time
	}
	all := make([]ordered, len(e.findings))
	for i, f := range e.findings {
		all[i] = ordered{finding: f, index: i}
		if !f.messageOnly {
			all[i].at = transitionTime(previous, f.condition, now)
			all[i].condition.LastTransitionTime = all[i].at
		}
	}
	byRecency := slices.Clone(all)
	slices.SortStableFunc(byRecency, func(a, b ordered) int {
		return cmp.Or(b.at.Time.Compare(a.at.Time), cmp.Compare(a.index, b.index))
	})

	compliant := !slices.ContainsFunc(all, func(o ordered) bool { return o.nonCompliant })
	var decider *ordered
	for i := range byRecency {
		o := &byRecency[i]
		if !o.informative && (compliant || o.nonCompliant) {
			decider = o
			break
		}
	}
	state, status := policyv1.NonCompliant, metav1.ConditionFalse
	if compliant {
		state, status = policyv1.Compliant, metav1.ConditionTrue
	}
	overall := metav1.Condition{Type: TypeCompliant, Status: status, Reason: decider.condition.Reason, Message: decider.condition.Message}
	overall.LastTransitionTime = transitionTime(previous, overall, now)

	var messages []string
	for _, o := range byRecency {
		if o.condition.Message != "" && !slices.Contains(messages, o.condition.Message) {
			messages = append(messages, o.condition.Message)
		}
	}
	conditions := []metav1.Condition{overall}
	for _, o := range all {
		if !o.messageOnly {
			conditions = append(conditions, o.condition)
		}
	}
	related := slices.Clone(e.related)
	slices.SortStableFunc(related, func(a, b policyv1.RelatedObject) int {
		return cmp.Or(cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Metadata.Namespace, b.Object.Metadata.Namespace),
			cmp.Compare(a.Object.Metadata.Name, b.Object.Metadata.Name))
	})
	return Evaluation{
		Compliance:     state,
		Conditions:     conditions,
		RelatedObjects: related,
		EventMessage:   string(state) + "; " + strings.Join(messages, ", "),
	}
}

// transitionTime keeps the previous condition's time while its status holds.
func transitionTime(previous []metav1.Condition, c metav1.Condition, now time.Time) metav1.Time {
	for _, p := range previous {
		if p.Type == c.Type && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
			return p.LastTransitionTime
		}
	}
	return metav1.NewTime(now)
}
