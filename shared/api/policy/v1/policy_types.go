package v1

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// RemediationAction says whether a policy only reports (inform) or also changes the
// cluster (enforce). OCM accepts both capitalisations.
//
// +kubebuilder:validation:Enum=Inform;inform;Enforce;enforce
type RemediationAction string

const (
	Enforce RemediationAction = "Enforce"
	Inform  RemediationAction = "Inform"
)

// IsEnforce reports whether the action is enforce, in either capitalisation.
func (a RemediationAction) IsEnforce() bool { return strings.EqualFold(string(a), string(Enforce)) }

// IsInform reports whether the action is inform, in either capitalisation.
func (a RemediationAction) IsInform() bool { return strings.EqualFold(string(a), string(Inform)) }

// TemplateRemediationAction is the remediationAction of a policy template kind
// (ConfigurationPolicy, OperatorPolicy): inform or enforce as on a Policy, or
// InformOnly, which OCM accepts on templates only and which no parent Policy,
// binding override or rollout can turn into enforce.
//
// +kubebuilder:validation:Enum=Inform;inform;Enforce;enforce;InformOnly;informonly
type TemplateRemediationAction string

// InformOnly is the template remediationAction that is never enforced.
const InformOnly TemplateRemediationAction = "InformOnly"

// IsEnforce reports whether the action is enforce, in either capitalisation.
func (a TemplateRemediationAction) IsEnforce() bool { return RemediationAction(a).IsEnforce() }

// IsInform reports whether the action is inform or InformOnly, in any capitalisation.
func (a TemplateRemediationAction) IsInform() bool {
	return RemediationAction(a).IsInform() || a.IsInformOnly()
}

// IsInformOnly reports whether the action is InformOnly, in any capitalisation.
func (a TemplateRemediationAction) IsInformOnly() bool {
	return strings.EqualFold(string(a), string(InformOnly))
}

// ComplianceState is the compliance of a policy, a template or a cluster.
//
// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant
type ComplianceState string

const (
	Compliant    ComplianceState = "Compliant"
	NonCompliant ComplianceState = "NonCompliant"
	Pending      ComplianceState = "Pending"
	// Terminating is what OCM's config-policy-controller writes on a
	// ConfigurationPolicy or OperatorPolicy being deleted; a Policy never
	// holds it (compliance.OfTemplate).
	Terminating ComplianceState = "Terminating"
)

// RolloutStatus is the state of a progressive rollout, per cluster and aggregated
// on the root policy (package shared/rollout).
//
// +kubebuilder:validation:Enum=ToApply;Progressing;Succeeded;Failed;TimeOut;Skip
type RolloutStatus string

const (
	RolloutToApply     RolloutStatus = "ToApply"
	RolloutProgressing RolloutStatus = "Progressing"
	RolloutSucceeded   RolloutStatus = "Succeeded"
	RolloutFailed      RolloutStatus = "Failed"
	RolloutTimeOut     RolloutStatus = "TimeOut"
	RolloutSkip        RolloutStatus = "Skip"
)

// PolicyTemplate wraps one policy engine object (ConfigurationPolicy,
// OperatorPolicy, ...) with the dependencies that gate it.
type PolicyTemplate struct {
	// ObjectDefinition is the template object, kept exactly as written. As in
	// OCM, the hub does not validate it as an object (a hub template may fill
	// in its metadata); the spoke refuses a template it cannot create, with
	// the API server's message, in the policy's status.
	//
	// +kubebuilder:pruning:PreserveUnknownFields
	ObjectDefinition runtime.RawExtension `json:"objectDefinition"`

	// ExtraDependencies gate this template only, in addition to the policy's
	// dependencies.
	//
	// +optional
	ExtraDependencies []PolicyDependency `json:"extraDependencies,omitempty"`

	// IgnorePending keeps a Pending template from making the policy Pending.
	//
	// +optional
	IgnorePending bool `json:"ignorePending,omitempty"`
}

// DefinitionMeta reads the apiVersion, kind, metadata.namespace and
// metadata.name of the object t's objectDefinition makes, as written (its
// Raw, else its Object); each is empty where the definition does not say.
// It reads nothing else of the definition, so a hub template elsewhere in it
// does not matter. False when t is nil or the definition is not a JSON
// object with those fields as strings.
func (t *PolicyTemplate) DefinitionMeta() (metav1.PartialObjectMetadata, bool) {
	if t == nil {
		return metav1.PartialObjectMetadata{}, false
	}
	raw := t.ObjectDefinition.Raw
	if len(raw) == 0 && t.ObjectDefinition.Object != nil {
		raw, _ = json.Marshal(t.ObjectDefinition.Object)
	}
	var def struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &def) != nil {
		return metav1.PartialObjectMetadata{}, false
	}
	return metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: def.APIVersion, Kind: def.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: def.Metadata.Name, Namespace: def.Metadata.Namespace},
	}, true
}

// PolicyDependency names an object whose compliance gates a template.
//
// +kubebuilder:validation:XValidation:rule="!(self.kind in ['ConfigurationPolicy', 'CertificatePolicy']) || !has(self.__namespace__) || size(self.__namespace__) == 0",message="namespace must be empty for ConfigurationPolicy and CertificatePolicy dependencies"
type PolicyDependency struct {
	// APIVersion of the dependency, e.g. policy.open-cluster-management.io/v1.
	// OCM requires it; fleetpolicy also accepts it left out. When empty, the policy group's
	// version that serves Kind is meant (shared/dependency resolves it).
	//
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind of the dependency, e.g. Policy, PolicySet, ConfigurationPolicy.
	//
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Name of the dependency.
	//
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the dependency; empty means the policy's own namespace.
	//
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Compliance is the state the dependency must be in.
	Compliance ComplianceState `json:"compliance"`
}

// HubTemplateOptions configures hub templates (kept for OCM compatibility).
type HubTemplateOptions struct {
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// PolicySpec is the desired state of a Policy.
type PolicySpec struct {
	// Disabled stops the policy from being propagated.
	Disabled bool `json:"disabled"`

	// CopyPolicyMetadata copies all labels and annotations to replicated policies
	// when true or unset; when false only policy.open-cluster-management.io/ ones.
	//
	// +optional
	CopyPolicyMetadata *bool `json:"copyPolicyMetadata,omitempty"`

	// RemediationAction overrides the remediationAction of every template.
	//
	// +optional
	RemediationAction RemediationAction `json:"remediationAction,omitempty"`

	// PolicyTemplates are the policy engine objects this policy delivers.
	PolicyTemplates []*PolicyTemplate `json:"policy-templates"`

	// Dependencies gate every template of this policy.
	//
	// +optional
	Dependencies []PolicyDependency `json:"dependencies,omitempty"`

	// HubTemplateOptions configures hub templates.
	//
	// +optional
	HubTemplateOptions *HubTemplateOptions `json:"hubTemplateOptions,omitempty"`

	// RolloutStrategy says how enforcement is rolled out over the bound clusters.
	// Unset or empty means All. (A pointer, so that an unset strategy stays unset
	// when the policy is copied: an empty one is defaulted by the API server.)
	// The rules below refuse durations and counts that package rollout's
	// ResolveStrategy refuses (crdtest holds them to it), and values Go cannot
	// decode (the hub could not read the Policy at all).
	//
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.minSuccessTime) || (self.all.minSuccessTime.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.all.minSuccessTime) >= duration('0s'))",message="all.minSuccessTime must be a non-negative duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.progressDeadline) || self.all.progressDeadline == 'None' || (self.all.progressDeadline.matches('^[0-9]+[hms]') && self.all.progressDeadline.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.all.progressDeadline) >= duration('0s'))",message="all.progressDeadline must be None or a duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.minSuccessTime) || (self.progressive.minSuccessTime.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressive.minSuccessTime) >= duration('0s'))",message="progressive.minSuccessTime must be a non-negative duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.progressDeadline) || self.progressive.progressDeadline == 'None' || (self.progressive.progressDeadline.matches('^[0-9]+[hms]') && self.progressive.progressDeadline.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressive.progressDeadline) >= duration('0s'))",message="progressive.progressDeadline must be None or a duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.minSuccessTime) || (self.progressivePerGroup.minSuccessTime.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressivePerGroup.minSuccessTime) >= duration('0s'))",message="progressivePerGroup.minSuccessTime must be a non-negative duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.progressDeadline) || self.progressivePerGroup.progressDeadline == 'None' || (self.progressivePerGroup.progressDeadline.matches('^[0-9]+[hms]') && self.progressivePerGroup.progressDeadline.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressivePerGroup.progressDeadline) >= duration('0s'))",message="progressivePerGroup.progressDeadline must be None or a duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.maxFailures) || (type(self.all.maxFailures) == int ? self.all.maxFailures >= 0 && self.all.maxFailures <= 2147483647 : !self.all.maxFailures.matches('^[0-9]+$') || (size(self.all.maxFailures) <= 10 && int(self.all.maxFailures) <= 2147483647))",message="all.maxFailures must be a non-negative integer (at most 2147483647) or a percentage from 0% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.maxFailures) || (type(self.progressive.maxFailures) == int ? self.progressive.maxFailures >= 0 && self.progressive.maxFailures <= 2147483647 : !self.progressive.maxFailures.matches('^[0-9]+$') || (size(self.progressive.maxFailures) <= 10 && int(self.progressive.maxFailures) <= 2147483647))",message="progressive.maxFailures must be a non-negative integer (at most 2147483647) or a percentage from 0% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.maxFailures) || (type(self.progressivePerGroup.maxFailures) == int ? self.progressivePerGroup.maxFailures >= 0 && self.progressivePerGroup.maxFailures <= 2147483647 : !self.progressivePerGroup.maxFailures.matches('^[0-9]+$') || (size(self.progressivePerGroup.maxFailures) <= 10 && int(self.progressivePerGroup.maxFailures) <= 2147483647))",message="progressivePerGroup.maxFailures must be a non-negative integer (at most 2147483647) or a percentage from 0% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.maxConcurrency) || (type(self.progressive.maxConcurrency) == int ? self.progressive.maxConcurrency >= 0 && self.progressive.maxConcurrency <= 2147483647 : !self.progressive.maxConcurrency.matches('^[0-9]+$') || (size(self.progressive.maxConcurrency) <= 10 && int(self.progressive.maxConcurrency) <= 2147483647)) && self.progressive.maxConcurrency != '0%'",message="progressive.maxConcurrency must be a non-negative integer (at most 2147483647) or a percentage from 1% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.mandatoryDecisionGroups) || self.progressive.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex >= 0 || has(g.groupName))",message="progressive.mandatoryDecisionGroups: a groupIndex without a groupName must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.mandatoryDecisionGroups) || self.progressive.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex <= 2147483647)",message="progressive.mandatoryDecisionGroups: a groupIndex must be at most 2147483647"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.mandatoryDecisionGroups) || self.progressivePerGroup.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex >= 0 || has(g.groupName))",message="progressivePerGroup.mandatoryDecisionGroups: a groupIndex without a groupName must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.mandatoryDecisionGroups) || self.progressivePerGroup.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex <= 2147483647)",message="progressivePerGroup.mandatoryDecisionGroups: a groupIndex must be at most 2147483647"
	RolloutStrategy *clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitempty"`
}

// Rollout returns the rollout strategy, the zero strategy (All) when unset.
func (s *PolicySpec) Rollout() clusterv1alpha1.RolloutStrategy {
	if s.RolloutStrategy == nil {
		return clusterv1alpha1.RolloutStrategy{}
	}
	return *s.RolloutStrategy
}

// PlacementDecision is one cluster a placement selected (kept for OCM compatibility).
type PlacementDecision struct {
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// +optional
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
}

// Placement is one binding of the policy as the root status shows it.
type Placement struct {
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
	// +optional
	PlacementRule string `json:"placementRule,omitempty"`
	// +optional
	Placement string `json:"placement,omitempty"`
	// +optional
	Decisions []PlacementDecision `json:"decisions,omitempty"`
	// +optional
	PolicySet string `json:"policySet,omitempty"`
	// Exclusions are the clusters the PolicySet of this entry excludes the
	// policy from (its spec.exclusions), sorted: this path does not place the
	// policy there. Set only on entries with policySet. OCM's field, newer
	// than OCM v0.19.0.
	//
	// +optional
	Exclusions []PolicyExclusion `json:"exclusions,omitempty"`
}

// PolicyExclusion is a cluster a PolicySet path excludes the policy from.
type PolicyExclusion struct {
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
}

// RemainingBinding is a PlacementBinding that still places the policy on a
// cluster a PolicySet path excludes.
type RemainingBinding struct {
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
}

// CompliancePerClusterStatus is one cluster's line in the root policy status.
type CompliancePerClusterStatus struct {
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// +optional
	ClusterName string `json:"clustername,omitempty"`
	// +optional
	ClusterNamespace string `json:"clusternamespace,omitempty"`
	// RemainingBindings are, on a cluster that a PolicySet path of
	// status.placement excludes, the PlacementBindings that still place the
	// policy there, sorted. OCM's field, newer than OCM v0.19.0.
	//
	// +optional
	RemainingBindings []RemainingBinding `json:"remainingBindings,omitempty"`
	// RolloutStatus is this cluster's state in the policy's rollout.
	//
	// +optional
	RolloutStatus RolloutStatus `json:"rolloutStatus,omitempty"`
	// RolloutLastTransitionTime is when rolloutStatus last changed, or when the
	// rollout of the current generation reached the cluster: the start of its
	// progressDeadline and of its soak (minSuccessTime). Microseconds are kept, so
	// that a soak is not cut short by rounding to the second.
	//
	// +optional
	RolloutLastTransitionTime *metav1.MicroTime `json:"rolloutLastTransitionTime,omitempty"`
	// RolloutGeneration is the root policy generation rolloutStatus belongs to.
	//
	// +optional
	RolloutGeneration int64 `json:"rolloutGeneration,omitempty"`
}

// ComplianceHistory is one compliance event of a template.
type ComplianceHistory struct {
	// +optional
	LastTimestamp metav1.Time `json:"lastTimestamp,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	EventName string `json:"eventName,omitempty"`
}

// DetailsPerTemplate is one template's compliance on a replicated policy.
type DetailsPerTemplate struct {
	// TemplateMeta names the template object (name, namespace, uid, ...). Its
	// fields are kept as written, as OCM's CRD does.
	//
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	TemplateMeta metav1.ObjectMeta `json:"templateMeta,omitempty"`
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// +optional
	History []ComplianceHistory `json:"history,omitempty"`
}

// PolicyStatus is the observed state of a Policy. placement and status are set on
// root policies; details on replicated policies; compliant and rolloutStatus on both.
type PolicyStatus struct {
	// +optional
	Placement []*Placement `json:"placement,omitempty"`
	// +optional
	Status []*CompliancePerClusterStatus `json:"status,omitempty"`
	// +optional
	ComplianceState ComplianceState `json:"compliant,omitempty"`
	// RolloutStatus is the aggregated rollout state (root) or this cluster's
	// (replicated policy).
	//
	// +optional
	RolloutStatus RolloutStatus `json:"rolloutStatus,omitempty"`
	// +optional
	Details []*DetailsPerTemplate `json:"details,omitempty"`
	// ObservedGeneration is, on a replicated policy, the metadata.generation of the
	// replica that the compliance above was evaluated for (set by the spoke's status
	// sync). The hub's rollout counts a cluster's compliance only when it is current.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions of a root policy, such as RolloutPlanMatches: whether the live
	// rollout still follows a RolloutPlan applied to the hub.
	//
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Policy delivers policy templates to the clusters its PlacementBindings select.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=policies,scope=Namespaced,shortName=plc
// +kubebuilder:printcolumn:name="Remediation action",type="string",JSONPath=".spec.remediationAction"
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Rollout status",type="string",JSONPath=".status.rolloutStatus"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PolicySpec `json:"spec"`
	// +optional
	Status PolicyStatus `json:"status,omitempty"`
}

// PolicyList is a list of Policies.
//
// +kubebuilder:object:root=true
type PolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Policy `json:"items"`
}
