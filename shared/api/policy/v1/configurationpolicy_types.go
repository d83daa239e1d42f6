package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Severity is how serious a violation of the policy is.
//
// +kubebuilder:validation:Enum=low;Low;medium;Medium;high;High;critical;Critical
type Severity string

// ComplianceType says how an object template is compared with the cluster.
//
// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustOnlyHave;Mustonlyhave;mustonlyhave;MustNotHave;Mustnothave;mustnothave
type ComplianceType string

const (
	MustHave     ComplianceType = "musthave"
	MustOnlyHave ComplianceType = "mustonlyhave"
	MustNotHave  ComplianceType = "mustnothave"
)

// NonEmptyString is a string of at least one character.
//
// +kubebuilder:validation:MinLength=1
type NonEmptyString string

// Target selects the namespaces a namespaced object template applies to.
type Target struct {
	// Include lists namespaces (glob patterns allowed) to include.
	//
	// +optional
	Include []NonEmptyString `json:"include,omitempty"`
	// Exclude lists namespaces (glob patterns allowed) to exclude.
	//
	// +optional
	Exclude []NonEmptyString `json:"exclude,omitempty"`
	// +optional
	MatchLabels *map[string]string `json:"matchLabels,omitempty"`
	// +optional
	MatchExpressions *[]metav1.LabelSelectorRequirement `json:"matchExpressions,omitempty"`
	// TerminatingInclusion says whether namespaces being deleted are
	// selected: IfMatch (and Default, as OCM's controller by default) selects
	// them like any other, Never leaves them out.
	//
	// +kubebuilder:default:=Default
	// +kubebuilder:validation:Enum=IfMatch;Never;Default
	// +optional
	TerminatingInclusion string `json:"terminatingInclusion,omitempty"`
}

// ObjectTemplate is one object a ConfigurationPolicy checks or enforces.
type ObjectTemplate struct {
	// ComplianceType: musthave, mustonlyhave or mustnothave.
	ComplianceType ComplianceType `json:"complianceType"`
	// MetadataComplianceType overrides ComplianceType for labels and annotations.
	//
	// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustOnlyHave;Mustonlyhave;mustonlyhave
	// +optional
	MetadataComplianceType ComplianceType `json:"metadataComplianceType,omitempty"`
	// RecreateOption says when enforce deletes and recreates the object
	// instead of updating it, as in OCM: None (the default) never;
	// IfRequired when the API server refuses the update (an immutable field);
	// Always on any update. Inform ignores it.
	//
	// +kubebuilder:default=None
	// +optional
	RecreateOption RecreateOption `json:"recreateOption,omitempty"`
	// ObjectDefinition is the object, kept exactly as written.
	//
	// +kubebuilder:pruning:PreserveUnknownFields
	ObjectDefinition runtime.RawExtension `json:"objectDefinition"`
	// ObjectSelector picks by label the objects of the objectDefinition's
	// kind (in its namespace, or those of spec.namespaceSelector) that an
	// objectDefinition without a name applies to; each is checked as if the
	// objectDefinition named it. It is ignored when the objectDefinition has
	// a name. {} selects every object of the kind.
	//
	// +optional
	ObjectSelector *metav1.LabelSelector `json:"objectSelector,omitempty"`
	// RecordDiff says where the difference between the object on the cluster
	// and the object definition goes when they differ, as in OCM: InStatus in
	// status.relatedObjects[].properties.diff, Log in the controller's log,
	// None nowhere. Unset, it is InStatus, but for kinds that hold sensitive
	// data (ConfigMap, Secret, OpenShift's OAuthAccessToken,
	// OAuthAuthorizeTokens and Route) and for templates that read sensitive
	// data, whose diff is replaced by a note saying how to record it.
	//
	// +optional
	RecordDiff RecordDiff `json:"recordDiff,omitempty"`
}

// RecordDiff says where an object template records the difference between an
// object and its definition.
//
// +kubebuilder:validation:Enum=Log;InStatus;None
type RecordDiff string

// The values of spec.object-templates[].recordDiff, as OCM spells them.
const (
	// RecordDiffLog logs the difference.
	RecordDiffLog RecordDiff = "Log"
	// RecordDiffInStatus writes it in the related object's properties.diff.
	RecordDiffInStatus RecordDiff = "InStatus"
	// RecordDiffNone records nothing.
	RecordDiffNone RecordDiff = "None"
)

// RecreateOption says when enforce deletes and recreates an object rather
// than updating it.
//
// +kubebuilder:validation:Enum=None;IfRequired;Always
type RecreateOption string

// The values of spec.object-templates[].recreateOption, as OCM spells them.
const (
	// RecreateNone always updates (the default).
	RecreateNone RecreateOption = "None"
	// RecreateIfRequired recreates when the update is refused as invalid.
	RecreateIfRequired RecreateOption = "IfRequired"
	// RecreateAlways recreates instead of any update.
	RecreateAlways RecreateOption = "Always"
)

// PruneObjectBehavior says what happens to created objects when the policy goes.
//
// +kubebuilder:validation:Enum=DeleteAll;DeleteIfCreated;None
type PruneObjectBehavior string

// EvaluationInterval sets when a policy is re-evaluated in each state: a
// minimum time between evaluations, `never`, or `watch` (the default when
// unset): when an object it evaluates changes.
type EvaluationInterval struct {
	// +kubebuilder:validation:Pattern=`^(?:(?:(?:[0-9]+(?:.[0-9])?)(?:h|m|s|(?:ms)|(?:us)|(?:ns)))|never|watch)+$`
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// +kubebuilder:validation:Pattern=`^(?:(?:(?:[0-9]+(?:.[0-9])?)(?:h|m|s|(?:ms)|(?:us)|(?:ns)))|never|watch)+$`
	// +optional
	NonCompliant string `json:"noncompliant,omitempty"`
}

// ConfigurationPolicySpec is the desired state of a ConfigurationPolicy.
//
// +kubebuilder:validation:XValidation:rule="has(self.object__dash__templates) != has(self.object__dash__templates__dash__raw)",message="exactly one of object-templates and object-templates-raw is required"
type ConfigurationPolicySpec struct {
	// +optional
	Severity Severity `json:"severity,omitempty"`
	// CustomMessage replaces the compliance message with a Go template's
	// output, as in OCM: the template sees .DefaultMessage and .Policy (the
	// policy with its new status, by its JSON field names).
	//
	// +optional
	CustomMessage CustomMessage `json:"customMessage,omitempty"`
	// RemediationAction: inform reports, enforce changes the cluster; InformOnly
	// reports whatever the parent Policy says. Unset means inform, as in OCM.
	//
	// +kubebuilder:default=inform
	RemediationAction TemplateRemediationAction `json:"remediationAction"`
	// NamespaceSelector picks the namespaces for namespaced templates without one.
	//
	// +optional
	NamespaceSelector Target `json:"namespaceSelector,omitempty"`
	// ObjectTemplates are the objects to check. Exactly one of
	// object-templates and object-templates-raw is set.
	//
	// +kubebuilder:validation:MinItems=1
	// +optional
	ObjectTemplates []*ObjectTemplate `json:"object-templates,omitempty"`
	// ObjectTemplatesRaw is the object-templates list as a YAML string, in
	// which managed-cluster templates ({{ ... }}) may build the list (for
	// example with range). It is resolved on the managed cluster.
	//
	// +optional
	ObjectTemplatesRaw string `json:"object-templates-raw,omitempty"`
	// +optional
	PruneObjectBehavior PruneObjectBehavior `json:"pruneObjectBehavior,omitempty"`
	// +optional
	EvaluationInterval EvaluationInterval `json:"evaluationInterval,omitempty"`
}

// CustomMessage holds the templates of the compliance message, one per
// compliance; an empty one keeps the default message.
type CustomMessage struct {
	// Compliant is the template used when the policy is compliant.
	//
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// NonCompliant is the template used otherwise.
	//
	// +optional
	NonCompliant string `json:"noncompliant,omitempty"`
}

// ObjectMetadata names an object.
type ObjectMetadata struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ObjectResource identifies an object a policy relates to.
type ObjectResource struct {
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// +optional
	Metadata ObjectMetadata `json:"metadata,omitempty"`
}

// ObjectProperties are extra facts about a related object.
type ObjectProperties struct {
	// +optional
	CreatedByPolicy *bool `json:"createdByPolicy,omitempty"`
	// +optional
	UID string `json:"uid,omitempty"`
	// Diff is the difference between the object and its definition, when
	// the object template's recordDiff is InStatus (written by
	// fleetpolicy's evaluator or, with --configurationpolicy-evaluator=ocm, OCM's).
	//
	// +optional
	Diff string `json:"diff,omitempty"`
	// MatchesAfterDryRun is written by OCM's config-policy-controller when it
	// evaluates: the object matched only after a dry-run update.
	//
	// +optional
	MatchesAfterDryRun bool `json:"matchesAfterDryRun,omitempty"`
}

// RelatedObject is an object a policy looked at, with its compliance and why.
type RelatedObject struct {
	// +optional
	Object ObjectResource `json:"object,omitempty"`
	// +optional
	Compliant string `json:"compliant,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Properties *ObjectProperties `json:"properties,omitempty"`
}

// Validity says whether a template could be evaluated.
type Validity struct {
	// +optional
	Valid *bool `json:"valid,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
}

// Condition is one observation about a template's compliance.
type Condition struct {
	Type string `json:"type"`
	// +optional
	Status metav1.ConditionStatus `json:"status,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// TemplateStatus is the compliance of one object template.
type TemplateStatus struct {
	// ComplianceState is the object template's compliance or, written by OCM's
	// config-policy-controller only, Terminating.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant;Terminating
	// +optional
	ComplianceState ComplianceState `json:"Compliant,omitempty"`
	// +optional
	Validity Validity `json:"Validity,omitempty"`
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
}

// ConfigurationPolicyStatus is the observed state of a ConfigurationPolicy.
type ConfigurationPolicyStatus struct {
	// ComplianceState is the policy's compliance or, written by OCM's
	// config-policy-controller only (a policy being deleted), Terminating.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant;Terminating
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// +optional
	CompliancyDetails []TemplateStatus `json:"compliancyDetails,omitempty"`
	// +optional
	RelatedObjects []RelatedObject `json:"relatedObjects,omitempty"`
	// +optional
	LastEvaluated string `json:"lastEvaluated,omitempty"`
	// LastEvaluatedGeneration is the generation the status describes.
	//
	// +optional
	LastEvaluatedGeneration int64 `json:"lastEvaluatedGeneration,omitempty"`
	// History is OCM's list of the newest compliance messages (at most 10,
	// newest first), written by OCM's config-policy-controller when it
	// evaluates; fleetpolicy's evaluator reports them as Events only.
	//
	// +optional
	History []HistoryEvent `json:"history,omitempty"`
}

// HistoryEvent is a compliance message and when it was sent, as OCM's
// config-policy-controller records it in a template's status.history.
type HistoryEvent struct {
	// +optional
	LastTimestamp metav1.MicroTime `json:"lastTimestamp,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ConfigurationPolicy checks, and in enforce mode creates, updates or deletes,
// objects on a managed cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=configurationpolicies,scope=Namespaced
// +kubebuilder:metadata:labels="policy.open-cluster-management.io/policy-type=template"
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ConfigurationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ConfigurationPolicySpec `json:"spec"`
	// +optional
	Status ConfigurationPolicyStatus `json:"status,omitempty"`
}

// ConfigurationPolicyList is a list of ConfigurationPolicies.
//
// +kubebuilder:object:root=true
type ConfigurationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ConfigurationPolicy `json:"items"`
}
