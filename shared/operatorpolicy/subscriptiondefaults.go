package operatorpolicy

import (
	"fmt"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// SuggestedNamespaceAnnotation is the annotation of a CSV (and of a
// PackageManifest channel's currentCSVDesc) naming the namespace its operator
// suggests to be installed in.
const SuggestedNamespaceAnnotation = "operatorframework.io/suggested-namespace"

// The messages of OCM's config-policy-controller when a subscription cannot be
// defaulted, word for word.
const (
	msgPackageManifestNotFound = "the subscription defaults could not be determined because the PackageManifest was not found"
	msgNoCatalog               = "the subscription defaults could not be determined because the PackageManifest didn't specify a catalog"
	msgCatalogMismatch         = "the subscription defaults could not be determined because the catalog specified in the policy does " +
		"not match what was found in the PackageManifest on the cluster"
	msgNoDefaultChannel  = "the default channel could not be determined because the PackageManifest didn't specify one"
	msgNamespaceRequired = "namespace is required in spec.subscription"
)

// SubscriptionDefaultsFrom is what the managed cluster offers to default a
// policy's subscription.
type SubscriptionDefaultsFrom struct {
	// PackageManifest is the packages.operators.coreos.com/v1 PackageManifest
	// named after the package; nil when there is none (or no such API).
	PackageManifest *unstructured.Unstructured
	// Related are the policy's status.relatedObjects, as last written.
	Related []policyv1.RelatedObject
	// Existing is the Subscription named after the package in
	// AdoptableNamespace; nil when there is none. Read only without a
	// PackageManifest.
	Existing *operatorsv1alpha1.Subscription
	// DefaultNamespace is the controller's default namespace (OCM's
	// --operator-policy-default-namespace); empty for none.
	DefaultNamespace string
}

// NeedsSubscriptionDefaults reports whether p leaves one of the
// subscription's channel, source, sourceNamespace or namespace unset: then
// ApplySubscriptionDefaults reads the cluster's PackageManifest, as OCM does.
func NeedsSubscriptionDefaults(p Policy) bool {
	s := p.Subscription
	return s.Channel == "" || s.Source == "" || s.SourceNamespace == "" || s.Namespace == ""
}

// AdoptableNamespace is the namespace in which a Subscription to adopt is
// looked for when there is no PackageManifest: the subscription's namespace,
// else that of the only Subscription among related; empty when neither
// says.
func AdoptableNamespace(p Policy, related []policyv1.RelatedObject) string {
	if p.Subscription.Namespace != "" {
		return p.Subscription.Namespace
	}
	return onlyRelatedSubscriptionNamespace(related)
}

// onlyRelatedSubscriptionNamespace is the namespace of the Subscription among
// related when there is exactly one; empty otherwise.
func onlyRelatedSubscriptionNamespace(related []policyv1.RelatedObject) string {
	namespace, count := "", 0
	for _, ro := range related {
		if ro.Object.Kind == operatorsv1alpha1.SubscriptionKind {
			namespace = ro.Object.Metadata.Namespace
			count++
		}
	}
	if count != 1 {
		return ""
	}
	return namespace
}

// ApplySubscriptionDefaults fills in what p's subscription leaves unset, as
// OCM's config-policy-controller v0.19 does; p is returned as it is when
// nothing is unset (NeedsSubscriptionDefaults). With a PackageManifest: the
// catalog is status.catalogSource and catalogSourceNamespace (a policy that
// names another catalog is an error), the channel status.defaultChannel, and
// the namespace that of the only Subscription in the policy's relatedObjects,
// else the operatorframework.io/suggested-namespace annotation of the
// currentCSVDesc of the subscription's channel. Without one: an existing
// Subscription (from.Existing) is adopted, its namespace and its channel and
// catalog filling what p leaves unset; with none to adopt, it is an error.
// Last, a namespace still unset is from.DefaultNamespace, else an error. The
// OperatorGroup is put in the subscription's namespace. Errors are field
// errors (Invalid) of the unset (or mismatching) fields, with OCM's messages.
func ApplySubscriptionDefaults(p Policy, from SubscriptionDefaultsFrom) (Policy, error) {
	if !NeedsSubscriptionDefaults(p) {
		return p, nil
	}
	s := &p.Subscription
	unset := unsetFields(*s)
	fail := func(errs ...*field.Error) (Policy, error) {
		return Policy{}, Invalid(p.Ref(), errs)
	}
	// cannotDefault is OCM's reason, about the subscription, naming its
	// fields that stay unset.
	names := make([]string, len(unset))
	for i, f := range unset {
		names[i] = string(f)
	}
	cannotDefault := func(reason string) (Policy, error) {
		return fail(field.Invalid(fieldSubscription, field.OmitValueType{},
			fmt.Sprintf("%s (unset: %s)", reason, strings.Join(names, ", "))))
	}
	if pm := from.PackageManifest; pm != nil {
		catalog, _, _ := unstructured.NestedString(pm.Object, "status", "catalogSource")
		catalogNamespace, _, _ := unstructured.NestedString(pm.Object, "status", "catalogSourceNamespace")
		if catalog == "" || catalogNamespace == "" {
			return cannotDefault(msgNoCatalog)
		}
		var mismatch []*field.Error
		if s.Source != "" && s.Source != catalog {
			mismatch = append(mismatch, field.Invalid(fieldSubscription.Child("source"), s.Source, msgCatalogMismatch))
		}
		if s.SourceNamespace != "" && s.SourceNamespace != catalogNamespace {
			mismatch = append(mismatch, field.Invalid(fieldSubscription.Child("sourceNamespace"), s.SourceNamespace, msgCatalogMismatch))
		}
		if len(mismatch) > 0 {
			return fail(mismatch...)
		}
		if s.Channel == "" {
			if s.Channel, _, _ = unstructured.NestedString(pm.Object, "status", "defaultChannel"); s.Channel == "" {
				return fail(field.Required(fieldSubscription.Child("channel"), msgNoDefaultChannel))
			}
		}
		s.Source, s.SourceNamespace = catalog, catalogNamespace
		if s.Namespace == "" {
			s.Namespace = onlyRelatedSubscriptionNamespace(from.Related)
		}
		if s.Namespace == "" {
			s.Namespace = suggestedNamespace(pm, s.Channel)
		}
	} else {
		existing := from.Existing
		namespace := AdoptableNamespace(p, from.Related)
		if existing == nil || namespace == "" || existing.Namespace != namespace || existing.Name != s.Package {
			return cannotDefault(msgPackageManifestNotFound)
		}
		s.Namespace = namespace
		if spec := existing.Spec; spec != nil {
			fillEmpty(&s.Channel, spec.Channel)
			fillEmpty(&s.Source, spec.CatalogSource)
			fillEmpty(&s.SourceNamespace, spec.CatalogSourceNamespace)
		}
	}
	if s.Namespace == "" {
		s.Namespace = from.DefaultNamespace
	}
	if s.Namespace == "" {
		return fail(field.Required(SubscriptionNamespace.Path(), msgNamespaceRequired))
	}
	if err := invalidNamespace(s.Namespace); err != nil {
		return fail(err)
	}
	if p.OperatorGroup != nil {
		og := *p.OperatorGroup
		if err := inSubscriptionNamespace(&og, s.Namespace); err != nil {
			return fail(err)
		}
		p.OperatorGroup = &og
	}
	return p, nil
}

// suggestedNamespace is the suggested namespace of the current CSV of the
// PackageManifest's channel; empty when it has none.
func suggestedNamespace(pm *unstructured.Unstructured, channel string) string {
	channels, _, _ := unstructured.NestedSlice(pm.Object, "status", "channels")
	for _, c := range channels {
		entry, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if name, _, _ := unstructured.NestedString(entry, "name"); name != channel {
			continue
		}
		namespace, _, _ := unstructured.NestedString(entry, "currentCSVDesc", "annotations", SuggestedNamespaceAnnotation)
		return namespace
	}
	return ""
}

func fillEmpty(dst *string, value string) {
	if *dst == "" {
		*dst = value
	}
}
