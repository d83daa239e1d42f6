package operatorpolicy

import (
	"context"
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

const (
	kindSubscription  = operatorsv1alpha1.SubscriptionKind
	kindOperatorGroup = operatorsv1.OperatorGroupKind

	// Condition reasons of Evaluate that call for a write.
	reasonOperatorGroupMissing = "OperatorGroupMissing"
	reasonSubscriptionMissing  = "SubscriptionMissing"
	reasonSubscriptionMismatch = "SubscriptionMismatch"
)

// enforce creates or updates the OperatorGroup and the Subscription where
// Evaluate finds them missing or different, and approves the InstallPlans of
// the namespace that DecideInstallPlanApproval approves. It returns what was
// observed with its writes applied. invalid is set, and nothing more is done,
// when the policy's content keeps a write from happening.
func (r *reconciler) enforce(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy, obs operatorpolicy.Observed) (_ operatorpolicy.Observed, invalid, _ error) {
	before := operatorpolicy.Evaluate(p, obs, nil, r.now())
	subCond := meta.FindStatusCondition(before.Conditions, operatorpolicy.TypeSubscriptionCompliant)
	groupOK, err := r.enforceOperatorGroup(ctx, p, &obs, meta.FindStatusCondition(before.Conditions, operatorpolicy.TypeOperatorGroupCompliant))
	if err != nil {
		invalid, err := asInvalid(p, field.NewPath("spec", "operatorGroup"), "OperatorGroup", err)
		return obs, invalid, err
	}
	if groupOK {
		if err := r.enforceSubscription(ctx, p, &obs, subCond); err != nil {
			invalid, err := asInvalid(p, field.NewPath("spec", "subscription"), "Subscription", err)
			return obs, invalid, err
		}
	}
	return obs, nil, r.approveInstallPlans(ctx, op, p, &obs)
}

// asInvalid sorts a write error: one that the object's content caused
// (rejected as invalid or a bad request) is returned as invalid, with the
// policy and field named; others are returned as errors, to retry.
func asInvalid(p operatorpolicy.Policy, path *field.Path, kind string, err error) (invalid, _ error) {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return operatorpolicy.Invalid(p.Ref(), field.ErrorList{
			field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("the API server rejects the %s: %v", kind, err))}), nil
	}
	return nil, err
}

// enforceOperatorGroup creates the wanted OperatorGroup when it is missing and
// updates it when it differs. It reports whether the OperatorGroup is right
// afterwards.
func (r *reconciler) enforceOperatorGroup(ctx context.Context, p operatorpolicy.Policy, obs *operatorpolicy.Observed, cond *metav1.Condition) (bool, error) {
	if cond == nil {
		return false, nil
	}
	if cond.Status == metav1.ConditionTrue {
		return true, nil
	}
	want, conflict := operatorpolicy.DesiredOperatorGroup(p, obs.OperatorGroups, nil)
	if conflict != nil || want == nil {
		return false, nil
	}
	switch cond.Reason {
	case reasonOperatorGroupMissing:
		if err := r.ensureNamespace(ctx, want.Namespace); err != nil {
			return false, err
		}
		if err := r.client.Create(ctx, want); err != nil {
			return false, fmt.Errorf("creating OperatorGroup %s/%s: %w", want.Namespace, want.Name, err)
		}
		obs.OperatorGroups = append(obs.OperatorGroups, *want)
		obs.Created.OperatorGroup = true
		return true, nil
	case operatorpolicy.ReasonOperatorGroupMismatch:
		for i := range obs.OperatorGroups {
			og := obs.OperatorGroups[i].DeepCopy()
			if og.Name != want.Name {
				continue
			}
			og.Spec.TargetNamespaces = want.Spec.TargetNamespaces
			og.Spec.Selector = want.Spec.Selector
			if want.Spec.ServiceAccountName != "" {
				og.Spec.ServiceAccountName = want.Spec.ServiceAccountName
			}
			if named := p.OperatorGroup; named != nil {
				if named.UpgradeStrategy != "" {
					og.Spec.UpgradeStrategy = named.UpgradeStrategy
				}
				if named.StaticProvidedAPIs != nil {
					og.Spec.StaticProvidedAPIs = *named.StaticProvidedAPIs
				}
			}
			if err := r.client.Update(ctx, og); err != nil {
				return false, fmt.Errorf("updating OperatorGroup %s/%s: %w", og.Namespace, og.Name, err)
			}
			obs.OperatorGroups[i] = *og
			return true, nil
		}
	}
	return false, nil
}

// enforceSubscription creates the wanted Subscription when it is missing and
// updates the fields the policy sets when they differ.
func (r *reconciler) enforceSubscription(ctx context.Context, p operatorpolicy.Policy, obs *operatorpolicy.Observed, cond *metav1.Condition) error {
	if cond == nil {
		return nil
	}
	want := operatorpolicy.DesiredSubscription(p)
	switch cond.Reason {
	case reasonSubscriptionMissing:
		if err := r.ensureNamespace(ctx, want.Namespace); err != nil {
			return err
		}
		if err := r.client.Create(ctx, want); err != nil {
			return fmt.Errorf("creating Subscription %s/%s: %w", want.Namespace, want.Name, err)
		}
		obs.Subscriptions = append(obs.Subscriptions, *want)
		obs.Created.Subscription = true
	case reasonSubscriptionMismatch:
		own := operatorpolicy.OwnSubscription(p, obs.Subscriptions)
		if own == nil {
			return nil
		}
		sub := own.DeepCopy()
		if sub.Spec == nil {
			sub.Spec = &operatorsv1alpha1.SubscriptionSpec{}
		}
		mergeSubscriptionSpec(sub.Spec, want.Spec)
		if err := r.client.Update(ctx, sub); err != nil {
			return fmt.Errorf("updating Subscription %s/%s: %w", sub.Namespace, sub.Name, err)
		}
		*own = *sub
	}
	return nil
}

// mergeSubscriptionSpec sets on have the fields want sets: the source fields
// want leaves empty stay as they are.
func mergeSubscriptionSpec(have, want *operatorsv1alpha1.SubscriptionSpec) {
	set := func(dst *string, src string) {
		if src != "" {
			*dst = src
		}
	}
	set(&have.Package, want.Package)
	set(&have.CatalogSource, want.CatalogSource)
	set(&have.CatalogSourceNamespace, want.CatalogSourceNamespace)
	set(&have.Channel, want.Channel)
	set(&have.StartingCSV, want.StartingCSV)
	have.InstallPlanApproval = want.InstallPlanApproval
	if want.Config != nil {
		have.Config = want.Config.DeepCopy()
	}
}

// ensureNamespace creates namespace when it does not exist.
func (r *reconciler) ensureNamespace(ctx context.Context, namespace string) error {
	err := r.reader.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	err = r.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	return nil
}

// approveInstallPlans approves each InstallPlan of the namespace that
// DecideInstallPlanApproval approves given every OperatorPolicy whose
// subscription is in the namespace (op as p, the others as cached).
func (r *reconciler) approveInstallPlans(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy, obs *operatorpolicy.Observed) error {
	if len(obs.InstallPlans) == 0 {
		return nil
	}
	policies, err := r.namespacePolicies(ctx, op, p)
	if err != nil {
		return err
	}
	for i := range obs.InstallPlans {
		plan := &obs.InstallPlans[i]
		if !operatorpolicy.DecideInstallPlanApproval(plan, policies, obs.Subscriptions).Approve {
			continue
		}
		approved := plan.DeepCopy()
		approved.Spec.Approved = true
		// The lock keeps a plan that changed since it was read from being approved.
		if err := r.client.Patch(ctx, approved, client.MergeFromWithOptions(plan, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("approving InstallPlan %s/%s: %w", plan.Namespace, plan.Name, err)
		}
		*plan = *approved
	}
	return nil
}

// namespacePolicies are the valid OperatorPolicies whose subscription is in
// p's namespace, normalised; op is p. The namespace of one that leaves it
// unset is the one its status last related its Subscription in.
func (r *reconciler) namespacePolicies(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy) ([]operatorpolicy.Policy, error) {
	policies := []operatorpolicy.Policy{p}
	for _, key := range []string{p.Subscription.Namespace, resolvedOnReconcileKey} {
		list := &v1beta1.OperatorPolicyList{}
		if err := r.client.List(ctx, list, client.MatchingFields{indexSubscriptionNamespace: key}); err != nil {
			return nil, fmt.Errorf("listing the OperatorPolicies of namespace %s: %w", p.Subscription.Namespace, err)
		}
		for i := range list.Items {
			other := &list.Items[i]
			if other.Namespace == op.Namespace && other.Name == op.Name {
				continue
			}
			normalized, err := operatorpolicy.Normalize(other)
			if err != nil {
				continue
			}
			if normalized.Subscription.Namespace == "" {
				normalized.Subscription.Namespace = operatorpolicy.AdoptableNamespace(normalized, other.Status.RelatedObjects)
			}
			if normalized.Subscription.Namespace == p.Subscription.Namespace {
				policies = append(policies, normalized)
			}
		}
	}
	return policies, nil
}
