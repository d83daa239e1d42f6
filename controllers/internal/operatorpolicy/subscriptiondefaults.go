package operatorpolicy

import (
	"context"
	"fmt"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// packageManifestKind is the PackageManifest that OLM's packageserver (an
// aggregated API server) serves for each package of the cluster's catalogs.
var packageManifestKind = schema.GroupVersionKind{Group: "packages.operators.coreos.com", Version: "v1", Kind: "PackageManifest"}

// packageManifestNamespace is the namespace PackageManifests are read in, as
// OCM reads them: packageserver serves in every namespace the packages of the
// global catalogs (and of that namespace's own).
const packageManifestNamespace = "default"

// packageManifestRecheck is how often a policy whose subscription is
// defaulted is reconciled again: packageserver serves no watch, so a
// PackageManifest that appears or changes is noticed only so (OCM requeues
// such a policy too).
const packageManifestRecheck = 30 * time.Second

// subscriptionDefaults applies operatorpolicy.ApplySubscriptionDefaults to p
// with what the cluster offers: the package's PackageManifest and, without
// one, the Subscription to adopt. invalid is the reason the defaults cannot
// be had; err an error reading the cluster, to retry.
func (r *reconciler) subscriptionDefaults(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy) (_ operatorpolicy.Policy, invalid, err error) {
	from := operatorpolicy.SubscriptionDefaultsFrom{Related: op.Status.RelatedObjects, DefaultNamespace: r.defaultNamespace}
	if from.PackageManifest, err = r.packageManifest(ctx, p.Subscription.Package); err != nil {
		return p, nil, err
	}
	if from.PackageManifest == nil {
		if namespace := operatorpolicy.AdoptableNamespace(p, op.Status.RelatedObjects); namespace != "" {
			sub := &operatorsv1alpha1.Subscription{}
			err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: p.Subscription.Package}, sub)
			switch {
			case err == nil:
				from.Existing = sub
			case !apierrors.IsNotFound(err):
				return p, nil, fmt.Errorf("reading Subscription %s/%s: %w", namespace, p.Subscription.Package, err)
			}
		}
	}
	defaulted, invalid := operatorpolicy.ApplySubscriptionDefaults(p, from)
	return defaulted, invalid, nil
}

// packageManifest reads the PackageManifest of pkg from the API server; nil
// when there is none, or no PackageManifest API (no packageserver), as OCM
// proceeds without it.
func (r *reconciler) packageManifest(ctx context.Context, pkg string) (*unstructured.Unstructured, error) {
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(packageManifestKind)
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: packageManifestNamespace, Name: pkg}, pm)
	switch {
	case err == nil:
		return pm, nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	}
	return nil, fmt.Errorf("reading PackageManifest %s: %w", pkg, err)
}
