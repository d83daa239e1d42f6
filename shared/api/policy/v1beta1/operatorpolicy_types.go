package v1beta1

import (
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// OperatorGroupTarget is fleetpolicy's own spelling of an OperatorGroup's targets (not in OCM).
type OperatorGroupTarget struct {
	// Namespaces the operator watches.
	//
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// Selector of the namespaces the operator watches; one of namespaces or selector.
	//
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// OperatorGroup is the OperatorGroup an OperatorPolicy wants. Targets may be given
// in fleetpolicy's spelling (target.namespaces / target.selector) or OLM's
// (targetNamespaces / selector); given in both, they must agree (the
// controller checks it: targetNamespaces and selector may be templates, which
// the API server cannot compare). Fields OLM adds later are preserved.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!has(self.target) || !has(self.target.namespaces) || !has(self.target.selector)",message="target: one of namespaces or selector is allowed"
type OperatorGroup struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Target *OperatorGroupTarget `json:"target,omitempty"`
	// TargetNamespaces is OLM's list of namespaces, or a managed-cluster
	// template that makes one, which the spoke resolves: the schema accepts
	// either, as OCM's does.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	TargetNamespaces *runtime.RawExtension `json:"targetNamespaces,omitempty"`
	// Selector is OLM's label selector of namespaces, or a managed-cluster
	// template that makes one.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Selector *runtime.RawExtension `json:"selector,omitempty"`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Extra holds the keys this type lacks (OLM's upgradeStrategy and
	// staticProvidedAPIs among them), as written (extra.go).
	Extra map[string]runtime.RawExtension `json:"-"`
}

// Subscription is the OLM Subscription an OperatorPolicy wants: the fields of an
// OLM SubscriptionSpec plus its namespace. Fields OLM adds later are preserved.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Subscription struct {
	// Name is the operator's package name; it is also the Subscription's name.
	//
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Channel string `json:"channel,omitempty"`
	// Source is the CatalogSource; empty lets the controller pick the default catalog.
	//
	// +optional
	Source string `json:"source,omitempty"`
	// +optional
	SourceNamespace string `json:"sourceNamespace,omitempty"`
	// +optional
	StartingCSV string `json:"startingCSV,omitempty"`
	// InstallPlanApproval is fleetpolicy's spelling (OCM refuses it); OCM's is spec.upgradeApproval.
	// In enforce mode with restricted allowedCSVs the Subscription is always Manual.
	// One that disagrees with upgradeApproval is admitted, as OCM's CRD admits
	// any, and reported invalid in status (ValidPolicySpec False,
	// InvalidPolicySpec), as OCM's controller reports any.
	//
	// +kubebuilder:validation:Enum=Automatic;Manual
	// +optional
	InstallPlanApproval operatorsv1alpha1.Approval `json:"installPlanApproval,omitempty"`
	// Config is OLM's SubscriptionConfig, or a managed-cluster template that
	// makes one (for example '{{ fromConfigMap ... | toLiteral }}'), which the
	// spoke resolves: the schema accepts either, as OCM's does.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Config *runtime.RawExtension `json:"config,omitempty"`
	// Extra holds the keys this type lacks, as written (extra.go).
	Extra map[string]runtime.RawExtension `json:"-"`
}

// RemovalAction says what happens to one kind of object on removal.
type RemovalAction string

const (
	RemovalKeep           RemovalAction = "Keep"
	RemovalDelete         RemovalAction = "Delete"
	RemovalDeleteIfUnused RemovalAction = "DeleteIfUnused"
)

// RemovalBehavior says what is removed when the policy is deleted (fleetpolicy's
// spelling) or set to complianceType mustnothave (OCM). Unset fields take
// fleetpolicy's defaults (shared/operatorpolicy).
type RemovalBehavior struct {
	// +kubebuilder:validation:Enum=Keep;Delete;DeleteIfUnused
	// +optional
	OperatorGroups RemovalAction `json:"operatorGroups,omitempty"`
	// +kubebuilder:validation:Enum=Keep;Delete
	// +optional
	Subscriptions RemovalAction `json:"subscriptions,omitempty"`
	// +kubebuilder:validation:Enum=Keep;Delete
	// +optional
	ClusterServiceVersions RemovalAction `json:"clusterServiceVersions,omitempty"`
	// +kubebuilder:validation:Enum=Keep;Delete
	// +optional
	InstallPlans RemovalAction `json:"installPlans,omitempty"`
	// +kubebuilder:validation:Enum=Keep;Delete
	// +optional
	CustomResourceDefinitions RemovalAction `json:"customResourceDefinitions,omitempty"`
	// +kubebuilder:validation:Enum=Keep;Delete
	// +optional
	APIServiceDefinitions RemovalAction `json:"apiServiceDefinitions,omitempty"`
}

// StatusConfigAction is the effect of a status on the policy in fleetpolicy's
// spelling (statusConfig; OCM's is complianceConfig).
//
// +kubebuilder:validation:Enum=StatusMessageOnly;Condition;NonCompliant
type StatusConfigAction string

const (
	StatusMessageOnly      StatusConfigAction     = "StatusMessageOnly"
	StatusCondition        StatusConfigAction     = "Condition"
	StatusNonCompliant     StatusConfigAction     = "NonCompliant"
	ComplianceCompliant    ComplianceConfigAction = "Compliant"
	ComplianceNonCompliant ComplianceConfigAction = "NonCompliant"
)

// StatusConfig is fleetpolicy's spelling (OCM's is complianceConfig) of what
// statuses make the policy NonCompliant.
type StatusConfig struct {
	// +optional
	CatalogSourceUnhealthy StatusConfigAction `json:"catalogSourceUnhealthy,omitempty"`
	// +optional
	DeploymentsUnavailable StatusConfigAction `json:"deploymentsUnavailable,omitempty"`
	// +optional
	UpgradesAvailable StatusConfigAction `json:"upgradesAvailable,omitempty"`
	// +optional
	UpgradesProgressing StatusConfigAction `json:"upgradesProgressing,omitempty"`
}

// ComplianceConfigAction is OCM's effect of a status on the policy.
//
// +kubebuilder:validation:Enum=Compliant;NonCompliant
type ComplianceConfigAction string

// ComplianceConfig is OCM's spelling of what statuses make the policy NonCompliant.
type ComplianceConfig struct {
	// +optional
	CatalogSourceUnhealthy ComplianceConfigAction `json:"catalogSourceUnhealthy,omitempty"`
	// +optional
	DeploymentsUnavailable ComplianceConfigAction `json:"deploymentsUnavailable,omitempty"`
	// +optional
	UpgradesAvailable ComplianceConfigAction `json:"upgradesAvailable,omitempty"`
	// +optional
	DeprecationsPresent ComplianceConfigAction `json:"deprecationsPresent,omitempty"`
	// +optional
	MinorChannelUpgradeAvailable ComplianceConfigAction `json:"minorChannelUpgradeAvailable,omitempty"`
}

// OperatorPolicySpec is the desired state of an OperatorPolicy.
//
// +kubebuilder:validation:XValidation:rule="!has(self.allowedCSVs) || !has(self.versions) || (self.allowedCSVs.all(c, c in self.versions) && self.versions.all(c, c in self.allowedCSVs))",message="allowedCSVs and versions disagree"
// +kubebuilder:validation:XValidation:rule="!has(self.statusConfig) || !has(self.complianceConfig) || !has(self.statusConfig.catalogSourceUnhealthy) || !has(self.complianceConfig.catalogSourceUnhealthy) || ((self.statusConfig.catalogSourceUnhealthy == 'NonCompliant') == (self.complianceConfig.catalogSourceUnhealthy == 'NonCompliant'))",message="statusConfig.catalogSourceUnhealthy and complianceConfig.catalogSourceUnhealthy disagree"
// +kubebuilder:validation:XValidation:rule="!has(self.statusConfig) || !has(self.complianceConfig) || !has(self.statusConfig.deploymentsUnavailable) || !has(self.complianceConfig.deploymentsUnavailable) || ((self.statusConfig.deploymentsUnavailable == 'NonCompliant') == (self.complianceConfig.deploymentsUnavailable == 'NonCompliant'))",message="statusConfig.deploymentsUnavailable and complianceConfig.deploymentsUnavailable disagree"
// +kubebuilder:validation:XValidation:rule="!has(self.statusConfig) || !has(self.complianceConfig) || !has(self.statusConfig.upgradesAvailable) || !has(self.complianceConfig.upgradesAvailable) || ((self.statusConfig.upgradesAvailable == 'NonCompliant') == (self.complianceConfig.upgradesAvailable == 'NonCompliant'))",message="statusConfig.upgradesAvailable and complianceConfig.upgradesAvailable disagree"
type OperatorPolicySpec struct {
	// +optional
	Severity policyv1.Severity `json:"severity,omitempty"`
	// RemediationAction: inform only reads; enforce creates and approves;
	// InformOnly only reads whatever the parent Policy says.
	//
	// +kubebuilder:default=inform
	RemediationAction policyv1.TemplateRemediationAction `json:"remediationAction"`
	// ComplianceType is OCM's: mustnothave removes the operator per removalBehavior.
	// Unset means musthave.
	//
	// +kubebuilder:validation:Enum=MustHave;Musthave;musthave;MustNotHave;Mustnothave;mustnothave
	// +optional
	ComplianceType policyv1.ComplianceType `json:"complianceType,omitempty"`
	// +optional
	OperatorGroup *OperatorGroup `json:"operatorGroup,omitempty"`
	Subscription  Subscription   `json:"subscription"`
	// AllowedCSVs (fleetpolicy's spelling of OCM's versions) lists the CSVs
	// that count as compliant and whose InstallPlans may be approved; "*"
	// allows any.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	AllowedCSVs []string `json:"allowedCSVs,omitempty"`
	// Versions is OCM's spelling of allowedCSVs; empty allows any.
	//
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Versions []string `json:"versions,omitempty"`
	// UpgradeApproval is OCM's spelling of installPlanApproval (None = Manual).
	//
	// +kubebuilder:validation:Enum=None;Automatic
	// +optional
	UpgradeApproval string `json:"upgradeApproval,omitempty"`
	// +optional
	RemovalBehavior RemovalBehavior `json:"removalBehavior,omitempty"`
	// +optional
	StatusConfig *StatusConfig `json:"statusConfig,omitempty"`
	// +optional
	ComplianceConfig *ComplianceConfig `json:"complianceConfig,omitempty"`
}

// OperatorPolicyStatus is the observed state of an OperatorPolicy.
type OperatorPolicyStatus struct {
	// ComplianceState is the policy's compliance or, written by OCM's
	// config-policy-controller only, Terminating.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Enum=Compliant;Pending;NonCompliant;Terminating
	// +optional
	ComplianceState policyv1.ComplianceState `json:"compliant,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	RelatedObjects []policyv1.RelatedObject `json:"relatedObjects,omitempty"`
	// +optional
	ResolvedSubscriptionLabel string `json:"resolvedSubscriptionLabel,omitempty"`
	// +optional
	OverlappingPolicies []string `json:"overlappingPolicies,omitempty"`
	// SubscriptionInterventionTime and History are written by OCM's
	// config-policy-controller when it evaluates OperatorPolicies (the
	// spoke's --operatorpolicy-evaluator=ocm); fleetpolicy's evaluator writes
	// neither.
	//
	// +optional
	SubscriptionInterventionTime *metav1.Time `json:"subscriptionInterventionTime,omitempty"`
	// +optional
	History []policyv1.HistoryEvent `json:"history,omitempty"`
}

// OperatorPolicy installs and governs one OLM operator on a managed cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=operatorpolicies,scope=Namespaced
// +kubebuilder:metadata:labels="policy.open-cluster-management.io/policy-type=template"
// +kubebuilder:printcolumn:name="Remediation action",type="string",JSONPath=".spec.remediationAction"
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OperatorPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OperatorPolicySpec `json:"spec"`
	// +optional
	Status OperatorPolicyStatus `json:"status,omitempty"`
}

// OperatorPolicyList is a list of OperatorPolicies.
//
// +kubebuilder:object:root=true
type OperatorPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorPolicy `json:"items"`
}
