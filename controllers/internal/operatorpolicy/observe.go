package operatorpolicy

import (
	"context"
	"fmt"
	"slices"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// observe reads what Evaluate, PlanRemoval and the enforcement need for p:
// OperatorGroups, Subscriptions and InstallPlans of the subscription's
// namespace and the Subscription's CatalogSource through from (the cache, or
// the API server when what was just deleted must not be seen again), the
// operator's CSVs and their Deployments always uncached.
func (r *reconciler) observe(ctx context.Context, from client.Reader, p operatorpolicy.Policy) (operatorpolicy.Observed, error) {
	var obs operatorpolicy.Observed
	namespace := p.Subscription.Namespace
	inNamespace := client.InNamespace(namespace)

	groups := &operatorsv1.OperatorGroupList{}
	if err := from.List(ctx, groups, inNamespace); err != nil {
		return obs, fmt.Errorf("listing OperatorGroups in %s: %w", namespace, err)
	}
	obs.OperatorGroups = groups.Items
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := from.List(ctx, subs, inNamespace); err != nil {
		return obs, fmt.Errorf("listing Subscriptions in %s: %w", namespace, err)
	}
	obs.Subscriptions = subs.Items
	plans := &operatorsv1alpha1.InstallPlanList{}
	if err := from.List(ctx, plans, inNamespace); err != nil {
		return obs, fmt.Errorf("listing InstallPlans in %s: %w", namespace, err)
	}
	obs.InstallPlans = plans.Items

	own := operatorpolicy.OwnSubscription(p, obs.Subscriptions)
	var err error
	if obs.ClusterServiceVersions, err = r.operatorCSVs(ctx, p, own); err != nil {
		return obs, err
	}
	if obs.Deployments, err = r.csvDeployments(ctx, own, obs.ClusterServiceVersions); err != nil {
		return obs, err
	}
	if obs.CatalogSource, err = catalogSource(ctx, from, p, own); err != nil {
		return obs, err
	}
	return obs, nil
}

// operatorCSVs are the CSVs carrying operatorpolicy.OperatorLabel (as OLM
// labels an operator's components) and the Subscription's installed and
// current ones.
func (r *reconciler) operatorCSVs(ctx context.Context, p operatorpolicy.Policy, own *operatorsv1alpha1.Subscription) ([]operatorsv1alpha1.ClusterServiceVersion, error) {
	namespace := p.Subscription.Namespace
	var csvs []operatorsv1alpha1.ClusterServiceVersion
	// A key that is no label key cannot be on any object: skip the list.
	if label, err := labels.NewRequirement(operatorpolicy.OperatorLabel(p.Subscription.Package, namespace), selection.Exists, nil); err == nil {
		list := &operatorsv1alpha1.ClusterServiceVersionList{}
		if err := r.reader.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*label)}); err != nil {
			return nil, fmt.Errorf("listing ClusterServiceVersions in %s: %w", namespace, err)
		}
		csvs = list.Items
	}
	if own == nil {
		return csvs, nil
	}
	for _, name := range []string{own.Status.InstalledCSV, own.Status.CurrentCSV} {
		if name == "" || slices.ContainsFunc(csvs, func(c operatorsv1alpha1.ClusterServiceVersion) bool { return c.Name == name }) {
			continue
		}
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, csv)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading ClusterServiceVersion %s/%s: %w", namespace, name, err)
		default:
			csvs = append(csvs, *csv)
		}
	}
	return csvs, nil
}

// csvDeployments are the Deployments that the Subscription's installed and
// current CSVs list and that exist.
func (r *reconciler) csvDeployments(ctx context.Context, own *operatorsv1alpha1.Subscription, csvs []operatorsv1alpha1.ClusterServiceVersion) ([]appsv1.Deployment, error) {
	if own == nil {
		return nil, nil
	}
	var out []appsv1.Deployment
	for i := range csvs {
		csv := &csvs[i]
		if csv.Name != own.Status.InstalledCSV && csv.Name != own.Status.CurrentCSV {
			continue
		}
		for _, spec := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
			if slices.ContainsFunc(out, func(d appsv1.Deployment) bool { return d.Name == spec.Name }) {
				continue
			}
			d := &appsv1.Deployment{}
			err := r.reader.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: spec.Name}, d)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, fmt.Errorf("reading Deployment %s/%s: %w", csv.Namespace, spec.Name, err)
			default:
				out = append(out, *d)
			}
		}
	}
	return out, nil
}

// catalogSource is the CatalogSource p names, else the one its Subscription
// names; nil when there is none.
func catalogSource(ctx context.Context, from client.Reader, p operatorpolicy.Policy, own *operatorsv1alpha1.Subscription) (*operatorsv1alpha1.CatalogSource, error) {
	name, namespace := p.Subscription.Source, p.Subscription.SourceNamespace
	if own != nil && own.Spec != nil {
		if name == "" {
			name = own.Spec.CatalogSource
		}
		if namespace == "" {
			namespace = own.Spec.CatalogSourceNamespace
		}
	}
	if name == "" || namespace == "" {
		return nil, nil
	}
	cs := &operatorsv1alpha1.CatalogSource{}
	err := from.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cs)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading CatalogSource %s/%s: %w", namespace, name, err)
	}
	return cs, nil
}
