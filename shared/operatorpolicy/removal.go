package operatorpolicy

import (
	"fmt"
	"slices"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// API versions of the cluster-scoped objects a CSV owns.
const (
	crdAPIVersion        = "apiextensions.k8s.io/v1"
	crdKind              = "CustomResourceDefinition"
	apiServiceAPIVersion = "apiregistration.k8s.io/v1"
	apiServiceKind       = "APIService"
)

// RemovalStep is one object the removal of an operator touches.
type RemovalStep struct {
	// Object identifies it; CustomResourceDefinitions and APIServices have no
	// namespace.
	Object policyv1.ObjectResource
	// Delete is true when it is to be deleted, false when it is kept.
	Delete bool
	// Reason says why, naming the removalBehavior field that decides.
	Reason string
}

// PlanRemoval lists what removing p's operator does, per p.Removal, to the
// objects observed (only those of the subscription's namespace count). The
// caller deletes the Delete steps, in order, when p enforces. Steps come in
// this order: the Subscription, InstallPlans, ClusterServiceVersions, the CRDs
// and APIServices the CSVs own, the OperatorGroup.
//
//   - The Subscription is OwnSubscription.
//   - The CSVs are the Subscription's installed and current ones and those
//     carrying the OperatorLabel label (never copies).
//   - An InstallPlan is the operator's when all its CSVs are; one shared with
//     another operator is always kept.
//   - The OperatorGroup is the one p names, or the DefaultOperatorGroupName one;
//     an OperatorGroup p did not make is never touched. DeleteIfUnused deletes it
//     only when no other Subscription in the namespace remains (the operator's
//     own remains when its removal is Keep).
func PlanRemoval(p Policy, obs Observed) []RemovalStep {
	namespace, pkg := p.Subscription.Namespace, p.Subscription.Package
	var steps []RemovalStep
	add := func(kind, apiVersion, ns, name string, remove bool, reason string) {
		steps = append(steps, RemovalStep{
			Object: policyv1.ObjectResource{Kind: kind, APIVersion: apiVersion, Metadata: policyv1.ObjectMetadata{Name: name, Namespace: ns}},
			Delete: remove,
			Reason: reason,
		})
	}
	byBehavior := func(kind, apiVersion, ns, name string, action v1beta1.RemovalAction, field string) {
		add(kind, apiVersion, ns, name, action == v1beta1.RemovalDelete, fmt.Sprintf("spec.removalBehavior.%s is %s", field, action))
	}

	sub := OwnSubscription(p, obs.Subscriptions)
	if sub != nil {
		byBehavior(operatorsv1alpha1.SubscriptionKind, subscriptionType.APIVersion, namespace, sub.Name, p.Removal.Subscriptions, "subscriptions")
	}

	csvs := operatorCSVs(p, sub, obs.ClusterServiceVersions)
	packages := map[string]string{}
	for _, csv := range csvs {
		packages[csv.Name] = pkg
	}
	for i := range obs.InstallPlans {
		plan := &obs.InstallPlans[i]
		if plan.Namespace != namespace {
			continue
		}
		planPackages, _ := csvPackages(plan, obs.Subscriptions)
		ours, others := 0, 0
		for csv, planPkg := range planPackages {
			if planPkg == pkg || packages[csv] == pkg {
				ours++
			} else {
				others++
			}
		}
		switch {
		case ours == 0:
		case others > 0:
			add(operatorsv1alpha1.InstallPlanKind, subscriptionType.APIVersion, namespace, plan.Name, false,
				"the InstallPlan is shared with other operators")
		default:
			byBehavior(operatorsv1alpha1.InstallPlanKind, subscriptionType.APIVersion, namespace, plan.Name, p.Removal.InstallPlans, "installPlans")
		}
	}

	for _, csv := range csvs {
		byBehavior(operatorsv1alpha1.ClusterServiceVersionKind, subscriptionType.APIVersion, namespace, csv.Name, p.Removal.ClusterServiceVersions, "clusterServiceVersions")
	}
	var crds, apiServices []string
	for _, csv := range csvs {
		for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
			crds = append(crds, owned.Name)
		}
		for _, owned := range csv.Spec.APIServiceDefinitions.Owned {
			apiServices = append(apiServices, owned.GetName())
		}
	}
	slices.Sort(crds)
	for _, name := range slices.Compact(crds) {
		byBehavior(crdKind, crdAPIVersion, "", name, p.Removal.CustomResourceDefinitions, "customResourceDefinitions")
	}
	slices.Sort(apiServices)
	for _, name := range slices.Compact(apiServices) {
		byBehavior(apiServiceKind, apiServiceAPIVersion, "", name, p.Removal.APIServiceDefinitions, "apiServiceDefinitions")
	}

	if og := removableOperatorGroup(p, obs.OperatorGroups); og != nil {
		if p.Removal.OperatorGroups != v1beta1.RemovalDeleteIfUnused {
			byBehavior(operatorsv1.OperatorGroupKind, operatorGroupType.APIVersion, namespace, og.Name, p.Removal.OperatorGroups, "operatorGroups")
		} else if users := operatorGroupUsers(p, sub, obs.Subscriptions); len(users) > 0 {
			add(operatorsv1.OperatorGroupKind, operatorGroupType.APIVersion, namespace, og.Name, false,
				"spec.removalBehavior.operatorGroups is DeleteIfUnused and Subscription "+strings.Join(users, ", ")+" remains in the namespace")
		} else {
			add(operatorsv1.OperatorGroupKind, operatorGroupType.APIVersion, namespace, og.Name, true,
				"spec.removalBehavior.operatorGroups is DeleteIfUnused and no other Subscription remains in the namespace")
		}
	}
	return steps
}

// operatorCSVs are the operator's CSVs present in its namespace, sorted by name.
func operatorCSVs(p Policy, sub *operatorsv1alpha1.Subscription, all []operatorsv1alpha1.ClusterServiceVersion) []*operatorsv1alpha1.ClusterServiceVersion {
	namespace := p.Subscription.Namespace
	label := OperatorLabel(p.Subscription.Package, namespace)
	var names []string
	if sub != nil {
		names = append(names, sub.Status.InstalledCSV, sub.Status.CurrentCSV)
	}
	var csvs []*operatorsv1alpha1.ClusterServiceVersion
	for i := range all {
		csv := &all[i]
		if csv.Namespace != namespace || csv.IsCopied() {
			continue
		}
		if _, labelled := csv.Labels[label]; labelled || slices.Contains(names, csv.Name) {
			csvs = append(csvs, csv)
		}
	}
	slices.SortFunc(csvs, func(a, b *operatorsv1alpha1.ClusterServiceVersion) int { return strings.Compare(a.Name, b.Name) })
	return csvs
}

func removableOperatorGroup(p Policy, all []operatorsv1.OperatorGroup) *operatorsv1.OperatorGroup {
	name := OperatorGroupName(p)
	for i := range all {
		if og := &all[i]; og.Namespace == p.Subscription.Namespace && og.Name == name {
			return og
		}
	}
	return nil
}

// operatorGroupUsers are the Subscriptions of the namespace that remain after
// the removal, sorted.
func operatorGroupUsers(p Policy, own *operatorsv1alpha1.Subscription, all []operatorsv1alpha1.Subscription) []string {
	var users []string
	for i := range all {
		s := &all[i]
		if s.Namespace != p.Subscription.Namespace {
			continue
		}
		if s == own && p.Removal.Subscriptions != v1beta1.RemovalKeep {
			continue
		}
		users = append(users, s.Name)
	}
	slices.Sort(users)
	return users
}

// removal evaluates a policy that removes its operator: NonCompliant while an
// object it deletes is present.
func (e *evaluator) removal() {
	steps := PlanRemoval(e.p, e.obs)
	for _, k := range []struct{ kind, conditionType string }{
		{operatorsv1.OperatorGroupKind, TypeOperatorGroupCompliant},
		{operatorsv1alpha1.SubscriptionKind, TypeSubscriptionCompliant},
		{operatorsv1alpha1.InstallPlanKind, TypeInstallPlanCompliant},
		{operatorsv1alpha1.ClusterServiceVersionKind, TypeClusterServiceVersionCompliant},
		{crdKind, TypeCustomResourceDefinitionCompliant},
		{apiServiceKind, TypeAPIServiceCompliant},
	} {
		var present, kept []string
		for _, s := range steps {
			if s.Object.Kind != k.kind {
				continue
			}
			if s.Delete {
				present = append(present, s.Object.Metadata.Name)
				e.relateWith(s.Object.Kind, s.Object.APIVersion, s.Object.Metadata.Namespace, s.Object.Metadata.Name,
					string(policyv1.NonCompliant), relatedPresent, nil)
			} else {
				kept = append(kept, s.Object.Metadata.Name)
				e.relateWith(s.Object.Kind, s.Object.APIVersion, s.Object.Metadata.Namespace, s.Object.Metadata.Name, "", s.Reason, nil)
			}
		}
		switch {
		case len(present) > 0:
			e.fixed(k.conditionType, false, k.kind+"Present", e.presentMessage(k.kind, present))
		case len(kept) > 0:
			e.fixed(k.conditionType, true, k.kind+"Kept", fmt.Sprintf("the policy specifies to keep the %s", k.kind))
		default:
			e.fixed(k.conditionType, true, k.kind+"NotPresent", fmt.Sprintf("the %s is not present", k.kind))
		}
	}
}

func (e *evaluator) presentMessage(kind string, names []string) string {
	message := fmt.Sprintf("the %s (%s) is present", kind, names[0])
	if len(names) > 1 {
		message = fmt.Sprintf("the %ss (%s) are present", kind, strings.Join(names, ", "))
	}
	if !e.p.Enforce {
		message += " and not deleted" + notEnforced
	}
	return message
}
