package operatorpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// AllCSVs is the allowedCSVs entry that allows every ClusterServiceVersion.
const AllCSVs = "*"

// Policy is an OperatorPolicy with every setting in one spelling, defaults
// applied and values canonical. Normalize builds it; the other functions of the
// package read only it.
type Policy struct {
	// Namespace and Name identify the OperatorPolicy.
	Namespace, Name string
	// Enforce is true for remediationAction enforce (any capitalisation).
	Enforce bool
	// Remove is true when the operator is to be removed per Removal now: the
	// policy is complianceType mustnothave. What deleting the policy does is
	// OnDeletion's (see RemovesOnDeletion).
	Remove bool
	// OnDeletion says which deletions of the policy remove the operator: the
	// AnnotationOnDeletion annotation, else RemoveOnUserDeletion in fleetpolicy's
	// spelling and RemoveNever in OCM's (SpellingOf).
	OnDeletion OnDeletion
	// Subscription is the wanted Subscription.
	Subscription Subscription
	// OperatorGroup is the OperatorGroup the policy names; nil when it names none.
	OperatorGroup *OperatorGroup
	// Allowed are the CSVs that count as compliant and may be approved.
	Allowed AllowedCSVs
	// Approval is the wanted installPlanApproval: Automatic or Manual.
	Approval operatorsv1alpha1.Approval
	// Effects say what each observed status does to the policy's compliance.
	Effects Effects
	// Removal says what is deleted on removal, per kind.
	Removal Removal
}

// Ref is the policy as namespace/name, as messages name it.
func (p Policy) Ref() string { return objectRef(p.Namespace, p.Name) }

// Subscription is the Subscription a policy wants.
type Subscription struct {
	// Package is spec.subscription.name: the package, and the Subscription's name.
	Package string
	// Namespace is spec.subscription.namespace. Normalize leaves it empty
	// when unset; ApplySubscriptionDefaults defaults it as OCM does.
	Namespace       string
	Channel         string
	Source          string
	SourceNamespace string
	StartingCSV     string
	Config          *operatorsv1alpha1.SubscriptionConfig
}

// OperatorGroup is the OperatorGroup a policy names.
type OperatorGroup struct {
	Name string
	// Namespace is always the subscription's namespace (empty while that is
	// unset and spec.operatorGroup.namespace is too).
	Namespace string
	// TargetNamespaces are sorted and unique. With a nil Selector, none means
	// AllNamespaces.
	TargetNamespaces   []string
	Selector           *metav1.LabelSelector
	ServiceAccountName string
	// UpgradeStrategy is OLM's spec.upgradeStrategy; empty when the policy
	// does not set it (OLM then defaults it).
	UpgradeStrategy operatorsv1.UpgradeStrategy
	// StaticProvidedAPIs is OLM's spec.staticProvidedAPIs; nil when the policy
	// does not set it.
	StaticProvidedAPIs *bool
}

// AllowedCSVs are the ClusterServiceVersions a policy allows.
type AllowedCSVs struct {
	// All is true when any CSV is allowed; Names is then empty.
	All bool
	// Names are sorted and unique.
	Names []string
}

// Allows reports whether csv is allowed.
func (a AllowedCSVs) Allows(csv string) bool {
	return a.All || a.Lists(csv)
}

// Lists reports whether csv is allowed by name (not only through "*").
func (a AllowedCSVs) Lists(csv string) bool {
	_, found := slices.BinarySearch(a.Names, csv)
	return found
}

// Effect is what an observed status does to a policy: fleetpolicy's statusConfig
// values. OCM's complianceConfig Compliant is EffectCondition.
type Effect string

const (
	// EffectMessageOnly mentions the status in the compliance message only.
	EffectMessageOnly Effect = Effect(v1beta1.StatusMessageOnly)
	// EffectCondition also records it as a condition, without affecting compliance.
	EffectCondition Effect = Effect(v1beta1.StatusCondition)
	// EffectNonCompliant also makes the policy NonCompliant.
	EffectNonCompliant Effect = Effect(v1beta1.StatusNonCompliant)
)

// Effects holds one Effect per configurable status.
type Effects struct {
	CatalogSourceUnhealthy       Effect
	DeploymentsUnavailable       Effect
	UpgradesAvailable            Effect
	UpgradesProgressing          Effect
	DeprecationsPresent          Effect
	MinorChannelUpgradeAvailable Effect
}

// Removal holds what happens to each kind of object on removal.
type Removal struct {
	OperatorGroups            v1beta1.RemovalAction
	Subscriptions             v1beta1.RemovalAction
	ClusterServiceVersions    v1beta1.RemovalAction
	InstallPlans              v1beta1.RemovalAction
	CustomResourceDefinitions v1beta1.RemovalAction
	APIServiceDefinitions     v1beta1.RemovalAction
}

// Invalid is the error of the field errors errs of the OperatorPolicy ref
// (namespace/name, or name alone): "OperatorPolicy <ref>: " and the errors,
// which errors.As finds; nil when errs is empty.
func Invalid(ref string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("OperatorPolicy %s: %w", ref, errs.ToAggregate())
}

// normalizer collects every problem of one policy.
type normalizer struct {
	errs field.ErrorList
}

func (n *normalizer) fail(err *field.Error) { n.errs = append(n.errs, err) }

// disagree is the field error of a setting written in both spellings with
// different values: about fleetpolicy's own field, naming OCM's.
func disagree(ownField *field.Path, ownValue any, ocmField *field.Path, ocmValue any, why string) *field.Error {
	detail := fmt.Sprintf("disagrees with %s (%v)", ocmField, ocmValue)
	if s, ok := ocmValue.(string); ok {
		detail = fmt.Sprintf("disagrees with %s (%q)", ocmField, s)
	}
	if why != "" {
		detail += "; " + why
	}
	return field.Invalid(ownField, ownValue, detail)
}

// notDNS is the field error of a value that must be a DNS label (or
// subdomain) and is not, with the validation's problems.
func notDNS(path *field.Path, value string, problems []string) *field.Error {
	return field.Invalid(path, value, strings.Join(problems, "; "))
}

// Normalize returns op as a Policy. Both spellings are accepted: fleetpolicy's
// (allowedCSVs, statusConfig, subscription.installPlanApproval, removal on
// deletion, operatorGroup.target) and OCM's (versions, complianceConfig,
// upgradeApproval, complianceType mustnothave, operatorGroup.targetNamespaces /
// selector). When both spellings set a setting they must agree. Every problem is
// returned as one error (Invalid: the policy, then each field error).
// Normalize does not look at op's deletion: RemovesOnDeletion decides what a
// deletion does.
func Normalize(op *v1beta1.OperatorPolicy) (Policy, error) {
	if op == nil {
		return Policy{}, errors.New("OperatorPolicy is nil")
	}
	n := &normalizer{}
	spec := &op.Spec
	p := Policy{Namespace: op.Namespace, Name: op.Name}

	p.Enforce = n.remediationAction(spec.RemediationAction)
	p.Remove = n.complianceType(spec.ComplianceType)
	p.OnDeletion = n.onDeletion(op.Annotations, spec)
	p.Subscription = n.subscription(&spec.Subscription)
	n.unknownKeys(spec.Subscription.Extra, fieldSubscription, nil)
	p.Approval = n.approval(spec.Subscription.InstallPlanApproval, spec.UpgradeApproval)
	p.OperatorGroup = n.operatorGroup(spec.OperatorGroup, p.Subscription.Namespace)
	p.Allowed = n.allowed(spec.AllowedCSVs, spec.Versions)
	p.Effects = n.effects(spec.StatusConfig, spec.ComplianceConfig)
	p.Removal = n.removal(spec.RemovalBehavior)

	if err := Invalid(objectRef(op.Namespace, op.Name), n.errs); err != nil {
		return Policy{}, err
	}
	return p, nil
}

func (n *normalizer) remediationAction(action policyv1.TemplateRemediationAction) bool {
	switch {
	case action.IsEnforce():
		return true
	case action == "" || action.IsInform():
		return false
	}
	n.fail(field.NotSupported(field.NewPath("spec", "remediationAction"), action, []string{"inform", "enforce", "InformOnly"}))
	return false
}

func (n *normalizer) complianceType(ct policyv1.ComplianceType) bool {
	switch {
	case ct == "" || strings.EqualFold(string(ct), string(policyv1.MustHave)):
		return false
	case strings.EqualFold(string(ct), string(policyv1.MustNotHave)):
		return true
	}
	n.fail(field.NotSupported(field.NewPath("spec", "complianceType"), ct, []policyv1.ComplianceType{policyv1.MustHave, policyv1.MustNotHave}))
	return false
}

func (n *normalizer) subscription(s *v1beta1.Subscription) Subscription {
	out := Subscription{
		Package:         s.Name,
		Namespace:       s.Namespace,
		Channel:         s.Channel,
		Source:          s.Source,
		SourceNamespace: s.SourceNamespace,
		StartingCSV:     s.StartingCSV,
		Config:          n.subscriptionConfig(s.Config),
	}
	if s.Name == "" {
		n.fail(field.Required(fieldSubscription.Child("name"), ""))
	} else if problems := validation.IsDNS1123Label(s.Name); len(problems) > 0 {
		n.fail(notDNS(fieldSubscription.Child("name"), s.Name, problems))
	}
	// An unset namespace is defaulted from the cluster (ApplySubscriptionDefaults).
	if err := invalidNamespace(out.Namespace); err != nil {
		n.fail(err)
	}
	return out
}

// invalidNamespace refuses a subscription namespace that is set and not a
// DNS label.
func invalidNamespace(namespace string) *field.Error {
	if namespace == "" {
		return nil
	}
	if problems := validation.IsDNS1123Label(namespace); len(problems) > 0 {
		return notDNS(SubscriptionNamespace.Path(), namespace, problems)
	}
	return nil
}

// inSubscriptionNamespace puts og in the subscription's namespace, refusing
// an operatorGroup.namespace that differs from it. An unset subscription
// namespace leaves og as it is.
func inSubscriptionNamespace(og *OperatorGroup, subscriptionNamespace string) *field.Error {
	switch {
	case og == nil || subscriptionNamespace == "":
	case og.Namespace == "":
		og.Namespace = subscriptionNamespace
	case og.Namespace != subscriptionNamespace:
		return field.Invalid(fieldOperatorGroup.Child("namespace"), og.Namespace,
			fmt.Sprintf("must be the subscription's namespace %q", subscriptionNamespace))
	}
	return nil
}

// templatable decodes a field the schema lets hold a managed-cluster
// template in place of its value (subscription.config,
// operatorGroup.targetNamespaces, operatorGroup.selector) into out, and
// reports whether it is set. A template still there (templates disabled, or
// not resolved where the policy is read) is refused, as is a value of the
// wrong shape.
func (n *normalizer) templatable(raw *runtime.RawExtension, path *field.Path, out any) bool {
	if raw == nil || len(raw.Raw) == 0 || string(raw.Raw) == "null" {
		return false
	}
	var template string
	if json.Unmarshal(raw.Raw, &template) == nil {
		n.fail(field.Invalid(path, template, "holds an unresolved template, not a value"))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		n.fail(field.Invalid(path, field.OmitValueType{}, err.Error()))
		return false
	}
	return true
}

// subscriptionConfig decodes spec.subscription.config.
func (n *normalizer) subscriptionConfig(raw *runtime.RawExtension) *operatorsv1alpha1.SubscriptionConfig {
	config := &operatorsv1alpha1.SubscriptionConfig{}
	if !n.templatable(raw, fieldSubscription.Child("config"), config) {
		return nil
	}
	return config
}

var (
	fieldSubscription        = field.NewPath("spec", "subscription")
	fieldInstallPlanApproval = fieldSubscription.Child("installPlanApproval")
	fieldUpgradeApproval     = field.NewPath("spec", "upgradeApproval")
)

// approval maps installPlanApproval (Automatic|Manual) and upgradeApproval
// (Automatic|None) onto one Approval; Automatic, OLM's default, when neither is set.
// When they disagree neither wins: the policy is invalid, as OCM v0.19's
// controller reports any installPlanApproval invalid (see the package doc).
func (n *normalizer) approval(installPlan operatorsv1alpha1.Approval, ocm string) operatorsv1alpha1.Approval {
	var fromInstallPlan, fromOCM operatorsv1alpha1.Approval
	switch {
	case installPlan == "":
	case strings.EqualFold(string(installPlan), string(operatorsv1alpha1.ApprovalAutomatic)):
		fromInstallPlan = operatorsv1alpha1.ApprovalAutomatic
	case strings.EqualFold(string(installPlan), string(operatorsv1alpha1.ApprovalManual)):
		fromInstallPlan = operatorsv1alpha1.ApprovalManual
	default:
		n.fail(field.NotSupported(fieldInstallPlanApproval, installPlan, []operatorsv1alpha1.Approval{operatorsv1alpha1.ApprovalAutomatic, operatorsv1alpha1.ApprovalManual}))
	}
	switch {
	case ocm == "":
	case strings.EqualFold(ocm, "Automatic"):
		fromOCM = operatorsv1alpha1.ApprovalAutomatic
	case strings.EqualFold(ocm, "None"):
		fromOCM = operatorsv1alpha1.ApprovalManual
	default:
		n.fail(field.NotSupported(fieldUpgradeApproval, ocm, []string{"Automatic", "None"}))
	}
	if fromInstallPlan != "" && fromOCM != "" && fromInstallPlan != fromOCM {
		n.fail(disagree(fieldInstallPlanApproval, installPlan, fieldUpgradeApproval, ocm, "Manual pairs with None"))
	}
	switch {
	case fromInstallPlan != "":
		return fromInstallPlan
	case fromOCM != "":
		return fromOCM
	}
	return operatorsv1alpha1.ApprovalAutomatic
}

var (
	fieldOperatorGroup      = field.NewPath("spec", "operatorGroup")
	fieldOGTargetNamespaces = fieldOperatorGroup.Child("targetNamespaces")
	fieldOGSelector         = fieldOperatorGroup.Child("selector")
	fieldTargetNamespaces   = fieldOperatorGroup.Child("target", "namespaces")
	fieldTargetSelector     = fieldOperatorGroup.Child("target", "selector")
)

func (n *normalizer) operatorGroup(og *v1beta1.OperatorGroup, subscriptionNamespace string) *OperatorGroup {
	if og == nil {
		return nil
	}
	out := &OperatorGroup{Name: og.Name, Namespace: og.Namespace, ServiceAccountName: og.ServiceAccountName}
	if og.Name == "" {
		n.fail(field.Required(fieldOperatorGroup.Child("name"), "when spec.operatorGroup is set"))
	} else if problems := validation.IsDNS1123Subdomain(og.Name); len(problems) > 0 {
		n.fail(notDNS(fieldOperatorGroup.Child("name"), og.Name, problems))
	}
	if err := inSubscriptionNamespace(out, subscriptionNamespace); err != nil {
		n.fail(err)
	}

	var ownNamespaces []string
	var ownSelector *metav1.LabelSelector
	if og.Target != nil {
		ownNamespaces, ownSelector = og.Target.Namespaces, og.Target.Selector
	}
	var olmNamespaces []string
	n.templatable(og.TargetNamespaces, fieldOGTargetNamespaces, &olmNamespaces)
	var olmSelector *metav1.LabelSelector
	if selector := (&metav1.LabelSelector{}); n.templatable(og.Selector, fieldOGSelector, selector) {
		olmSelector = selector
	}
	ownSet := n.namespaceSet(ownNamespaces, fieldTargetNamespaces)
	olmSet := n.namespaceSet(olmNamespaces, fieldOGTargetNamespaces)
	n.validSelector(ownSelector, fieldTargetSelector)
	n.validSelector(olmSelector, fieldOGSelector)

	if len(ownSet) > 0 && ownSelector != nil {
		n.fail(field.Forbidden(fieldTargetSelector, "may not be set with "+fieldTargetNamespaces.String()))
	}
	if len(olmSet) > 0 && olmSelector != nil {
		n.fail(field.Forbidden(fieldOGSelector, "may not be set with "+fieldOGTargetNamespaces.String()))
	}
	if len(ownSet) > 0 && len(olmSet) > 0 && !slices.Equal(ownSet, olmSet) {
		n.fail(disagree(fieldTargetNamespaces, ownSet, fieldOGTargetNamespaces, olmSet, ""))
	}
	if ownSelector != nil && olmSelector != nil && !equality.Semantic.DeepEqual(ownSelector, olmSelector) {
		n.fail(field.Invalid(fieldTargetSelector, field.OmitValueType{}, "disagrees with "+fieldOGSelector.String()))
	}

	out.TargetNamespaces = ownSet
	if len(olmSet) > 0 {
		out.TargetNamespaces = olmSet
	}
	out.Selector = ownSelector
	if olmSelector != nil {
		out.Selector = olmSelector
	}
	out.Selector = out.Selector.DeepCopy()
	n.unknownKeys(og.Extra, fieldOperatorGroup, map[string]func(raw []byte, path *field.Path){
		"upgradeStrategy": func(raw []byte, path *field.Path) {
			var strategy operatorsv1.UpgradeStrategy
			if err := json.Unmarshal(raw, &strategy); err != nil ||
				(strategy != operatorsv1.UpgradeStrategyDefault && strategy != operatorsv1.UpgradeStrategyUnsafeFailForward) {
				n.fail(field.NotSupported(path, json.RawMessage(raw), []operatorsv1.UpgradeStrategy{operatorsv1.UpgradeStrategyDefault, operatorsv1.UpgradeStrategyUnsafeFailForward}))
				return
			}
			out.UpgradeStrategy = strategy
		},
		"staticProvidedAPIs": func(raw []byte, path *field.Path) {
			var static bool
			if err := json.Unmarshal(raw, &static); err != nil {
				n.fail(field.TypeInvalid(path, json.RawMessage(raw), "must be true or false"))
				return
			}
			out.StaticProvidedAPIs = &static
		},
	})
	return out
}

// unknownKeys handles the keys of spec.subscription or spec.operatorGroup that
// the API types lack (v1beta1 Extra): a key of use is decoded by its function;
// any other is refused as an unknown field naming it, as OCM refuses what does
// not decode into OLM's SubscriptionSpec / OperatorGroupSpec. Keys are handled
// in sorted order.
func (n *normalizer) unknownKeys(extra map[string]runtime.RawExtension, parent *field.Path, use map[string]func(raw []byte, path *field.Path)) {
	for _, key := range slices.Sorted(maps.Keys(extra)) {
		path := parent.Child(key)
		if decode, ok := use[key]; ok {
			decode(extra[key].Raw, path)
			continue
		}
		n.fail(field.Forbidden(path, "unknown field: OLM's "+olmSpecOf[parent.String()]+" has no such field"))
	}
}

// olmSpecOf names the OLM type each free-form object stands for.
var olmSpecOf = map[string]string{"spec.subscription": "SubscriptionSpec", "spec.operatorGroup": "OperatorGroupSpec"}

// namespaceSet returns names sorted and unique, failing on invalid entries.
func (n *normalizer) namespaceSet(names []string, path *field.Path) []string {
	var set []string
	for i, name := range names {
		if problems := validation.IsDNS1123Label(name); len(problems) > 0 {
			n.fail(notDNS(path.Index(i), name, problems))
			continue
		}
		set = append(set, name)
	}
	slices.Sort(set)
	return slices.Compact(set)
}

func (n *normalizer) validSelector(selector *metav1.LabelSelector, path *field.Path) {
	if selector == nil {
		return
	}
	if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
		n.fail(field.Invalid(path, field.OmitValueType{}, err.Error()))
	}
}

var (
	fieldAllowedCSVs = field.NewPath("spec", "allowedCSVs")
	fieldVersions    = field.NewPath("spec", "versions")
)

// allowed merges fleetpolicy's allowedCSVs (exact names, "*" = all, must not be
// empty when given) and OCM's versions (entries split at commas, blanks
// ignored, nothing left = all).
func (n *normalizer) allowed(allowedCSVs, versions []string) AllowedCSVs {
	var fromVersions []string
	for _, entry := range versions {
		for part := range strings.SplitSeq(entry, ",") {
			if part = strings.TrimSpace(part); part != "" {
				fromVersions = append(fromVersions, part)
			}
		}
	}
	ocm := canonicalAllowed(fromVersions)
	if allowedCSVs == nil {
		return ocm
	}

	if len(allowedCSVs) == 0 {
		n.fail(field.Required(fieldAllowedCSVs, `must have at least one item; use "*" to allow any version`))
	}
	var fromAllowedCSVs []string
	for i, name := range allowedCSVs {
		if name = strings.TrimSpace(name); name == "" {
			n.fail(field.Required(fieldAllowedCSVs.Index(i), "must not be empty"))
			continue
		}
		fromAllowedCSVs = append(fromAllowedCSVs, name)
	}
	listed := canonicalAllowed(fromAllowedCSVs)
	if len(fromVersions) > 0 && (listed.All != ocm.All || !slices.Equal(listed.Names, ocm.Names)) {
		n.fail(disagree(fieldAllowedCSVs, listed.String(), fieldVersions, ocm.String(), ""))
	}
	return listed
}

func canonicalAllowed(names []string) AllowedCSVs {
	if len(names) == 0 || slices.Contains(names, AllCSVs) {
		return AllowedCSVs{All: true}
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	return AllowedCSVs{Names: slices.Compact(sorted)}
}

func (a AllowedCSVs) String() string {
	if a.All {
		return "all"
	}
	return "[" + strings.Join(a.Names, ", ") + "]"
}

// Defaults are OCM's complianceConfig defaults; upgradesProgressing, which
// only fleetpolicy has, defaults to NonCompliant as OCM's InstallPlansInstalling is.
var defaultEffects = Effects{
	CatalogSourceUnhealthy:       EffectCondition,
	DeploymentsUnavailable:       EffectNonCompliant,
	UpgradesAvailable:            EffectCondition,
	UpgradesProgressing:          EffectNonCompliant,
	DeprecationsPresent:          EffectCondition,
	MinorChannelUpgradeAvailable: EffectCondition,
}

func (n *normalizer) effects(status *v1beta1.StatusConfig, ocm *v1beta1.ComplianceConfig) Effects {
	if status == nil {
		status = &v1beta1.StatusConfig{}
	}
	if ocm == nil {
		ocm = &v1beta1.ComplianceConfig{}
	}
	out := defaultEffects
	for _, f := range []struct {
		name   string
		status v1beta1.StatusConfigAction
		ocm    v1beta1.ComplianceConfigAction
		effect *Effect
	}{
		{"catalogSourceUnhealthy", status.CatalogSourceUnhealthy, ocm.CatalogSourceUnhealthy, &out.CatalogSourceUnhealthy},
		{"deploymentsUnavailable", status.DeploymentsUnavailable, ocm.DeploymentsUnavailable, &out.DeploymentsUnavailable},
		{"upgradesAvailable", status.UpgradesAvailable, ocm.UpgradesAvailable, &out.UpgradesAvailable},
		{"upgradesProgressing", status.UpgradesProgressing, "", &out.UpgradesProgressing},
		{"deprecationsPresent", "", ocm.DeprecationsPresent, &out.DeprecationsPresent},
		{"minorChannelUpgradeAvailable", "", ocm.MinorChannelUpgradeAvailable, &out.MinorChannelUpgradeAvailable},
	} {
		statusField, ocmField := field.NewPath("spec", "statusConfig", f.name), field.NewPath("spec", "complianceConfig", f.name)
		fromStatus := n.statusEffect(f.status, statusField)
		fromOCM := n.ocmEffect(f.ocm, ocmField)
		if fromStatus != "" && fromOCM != "" && (fromStatus == EffectNonCompliant) != (fromOCM == EffectNonCompliant) {
			n.fail(disagree(statusField, f.status, ocmField, string(f.ocm), ""))
		}
		switch {
		case fromStatus != "":
			*f.effect = fromStatus
		case fromOCM != "":
			*f.effect = fromOCM
		}
	}
	return out
}

func (n *normalizer) statusEffect(value v1beta1.StatusConfigAction, path *field.Path) Effect {
	if value == "" {
		return ""
	}
	for _, e := range []Effect{EffectMessageOnly, EffectCondition, EffectNonCompliant} {
		if strings.EqualFold(string(value), string(e)) {
			return e
		}
	}
	n.fail(field.NotSupported(path, value, []Effect{EffectMessageOnly, EffectCondition, EffectNonCompliant}))
	return ""
}

func (n *normalizer) ocmEffect(value v1beta1.ComplianceConfigAction, path *field.Path) Effect {
	switch {
	case value == "":
		return ""
	case strings.EqualFold(string(value), string(v1beta1.ComplianceCompliant)):
		return EffectCondition
	case strings.EqualFold(string(value), string(v1beta1.ComplianceNonCompliant)):
		return EffectNonCompliant
	}
	n.fail(field.NotSupported(path, value, []v1beta1.ComplianceConfigAction{v1beta1.ComplianceCompliant, v1beta1.ComplianceNonCompliant}))
	return ""
}

func (n *normalizer) removal(rb v1beta1.RemovalBehavior) Removal {
	keepOrDelete := []v1beta1.RemovalAction{v1beta1.RemovalKeep, v1beta1.RemovalDelete}
	withUnused := []v1beta1.RemovalAction{v1beta1.RemovalKeep, v1beta1.RemovalDelete, v1beta1.RemovalDeleteIfUnused}
	return Removal{
		OperatorGroups:            n.removalAction(rb.OperatorGroups, "operatorGroups", v1beta1.RemovalDeleteIfUnused, withUnused),
		Subscriptions:             n.removalAction(rb.Subscriptions, "subscriptions", v1beta1.RemovalDelete, keepOrDelete),
		ClusterServiceVersions:    n.removalAction(rb.ClusterServiceVersions, "clusterServiceVersions", v1beta1.RemovalDelete, keepOrDelete),
		InstallPlans:              n.removalAction(rb.InstallPlans, "installPlans", v1beta1.RemovalKeep, keepOrDelete),
		CustomResourceDefinitions: n.removalAction(rb.CustomResourceDefinitions, "customResourceDefinitions", v1beta1.RemovalKeep, keepOrDelete),
		APIServiceDefinitions:     n.removalAction(rb.APIServiceDefinitions, "apiServiceDefinitions", v1beta1.RemovalKeep, keepOrDelete),
	}
}

func (n *normalizer) removalAction(value v1beta1.RemovalAction, name string, def v1beta1.RemovalAction, allowed []v1beta1.RemovalAction) v1beta1.RemovalAction {
	if value == "" {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(string(value), string(a)) {
			return a
		}
	}
	n.fail(field.NotSupported(field.NewPath("spec", "removalBehavior", name), value, allowed))
	return def
}

func objectRef(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
