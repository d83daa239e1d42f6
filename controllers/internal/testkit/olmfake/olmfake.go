package olmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// Bundle is one operator version in a fake catalog.
type Bundle struct {
	// Package and Channel place the bundle; CSV is its ClusterServiceVersion's name.
	Package, Channel, CSV string
	// Replaces is the CSV this one upgrades, empty for the first version.
	Replaces string
	// Deployments are the names of the operator's Deployments.
	Deployments []string
	// CRDs are the CustomResourceDefinitions the CSV owns, as <plural>.<group>.
	CRDs []string
}

// OLM is the fake. Its methods are safe to call from tests while it runs.
type OLM struct {
	client client.Client
	// reader reads uncached, so that the fake never acts twice on stale reads.
	reader client.Reader

	mu          sync.Mutex
	catalogs    map[types.NamespacedName][]Bundle
	held        map[string]bool
	unavailable map[types.NamespacedName]bool

	wake chan event.GenericEvent
}

// Setup registers the fake on mgr (a manager of the cluster it plays OLM on).
func Setup(mgr ctrl.Manager) (*OLM, error) {
	o := &OLM{
		client:      mgr.GetClient(),
		reader:      mgr.GetAPIReader(),
		catalogs:    map[types.NamespacedName][]Bundle{},
		held:        map[string]bool{},
		unavailable: map[types.NamespacedName]bool{},
		wake:        make(chan event.GenericEvent, 64),
	}
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("olmfake").
		Watches(&operatorsv1alpha1.Subscription{}, toNamespace).
		Watches(&operatorsv1alpha1.InstallPlan{}, toNamespace).
		WatchesRawSource(source.Channel(o.wake, &handler.EnqueueRequestForObject{})).
		Complete(o)
	return o, err
}

// wakeNamespace makes the fake look at namespace again.
func (o *OLM) wakeNamespace(namespace string) {
	o.wake <- event.GenericEvent{Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}}
}

// AddCatalog creates a CatalogSource in state READY that serves bundles.
func (o *OLM) AddCatalog(ctx context.Context, namespace, name string, bundles ...Bundle) error {
	cs := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: "olmfake.invalid:50051"},
	}
	if err := o.client.Create(ctx, cs); err != nil {
		return err
	}
	o.mu.Lock()
	o.catalogs[types.NamespacedName{Namespace: namespace, Name: name}] = slices.Clone(bundles)
	o.mu.Unlock()
	return o.SetCatalogState(ctx, namespace, name, "READY")
}

// SetCatalogState sets a CatalogSource's status.connectionState.lastObservedState
// as the catalog-operator does from its gRPC connection.
func (o *OLM) SetCatalogState(ctx context.Context, namespace, name, state string) error {
	cs := &operatorsv1alpha1.CatalogSource{}
	if err := o.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cs); err != nil {
		return err
	}
	cs.Status.GRPCConnectionState = &operatorsv1alpha1.GRPCConnectionState{
		Address: cs.Spec.Address, LastObservedState: state, LastConnectTime: metav1.Now(),
	}
	return o.client.Status().Update(ctx, cs)
}

// Publish adds bundles to a catalog made by AddCatalog and resolves every
// namespace with a Subscription again.
func (o *OLM) Publish(ctx context.Context, namespace, name string, bundles ...Bundle) error {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	o.mu.Lock()
	_, known := o.catalogs[key]
	o.catalogs[key] = append(o.catalogs[key], bundles...)
	o.mu.Unlock()
	if !known {
		return fmt.Errorf("olmfake: no catalog %s", key)
	}
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := o.reader.List(ctx, subs); err != nil {
		return err
	}
	for _, s := range subs.Items {
		o.wakeNamespace(s.Namespace)
	}
	return nil
}

// Hold stops the fake from resolving or installing anything in namespace.
func (o *OLM) Hold(namespace string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held[namespace] = true
}

// Release undoes Hold.
func (o *OLM) Release(namespace string) {
	o.mu.Lock()
	delete(o.held, namespace)
	o.mu.Unlock()
	o.wakeNamespace(namespace)
}

// SetDeploymentAvailable says whether an operator Deployment is available, now
// and whenever the fake installs it.
func (o *OLM) SetDeploymentAvailable(ctx context.Context, namespace, name string, available bool) error {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	o.mu.Lock()
	o.unavailable[key] = !available
	o.mu.Unlock()
	d := &appsv1.Deployment{}
	if err := o.reader.Get(ctx, key, d); err != nil {
		return client.IgnoreNotFound(err)
	}
	if err := o.writeDeploymentStatus(ctx, d); err != nil {
		return err
	}
	o.wakeNamespace(namespace)
	return nil
}

func (o *OLM) isHeld(namespace string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.held[namespace]
}

func (o *OLM) isAvailable(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.unavailable[key]
}

// bundle finds a bundle by CSV name in any catalog.
func (o *OLM) bundle(csv string) (Bundle, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, bundles := range o.catalogs {
		for _, b := range bundles {
			if b.CSV == csv {
				return b, true
			}
		}
	}
	return Bundle{}, false
}

// next is the bundle a Subscription should move to: for a first install its
// startingCSV or the head of its channel, else the bundle that replaces its
// installed CSV.
func (o *OLM) next(sub *operatorsv1alpha1.Subscription) (Bundle, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var inChannel []Bundle
	for _, b := range o.catalogs[types.NamespacedName{Namespace: sub.Spec.CatalogSourceNamespace, Name: sub.Spec.CatalogSource}] {
		if b.Package == sub.Spec.Package && (sub.Spec.Channel == "" || b.Channel == sub.Spec.Channel) {
			inChannel = append(inChannel, b)
		}
	}
	find := func(match func(Bundle) bool) (Bundle, bool) {
		i := slices.IndexFunc(inChannel, match)
		if i < 0 {
			return Bundle{}, false
		}
		return inChannel[i], true
	}
	switch installed := sub.Status.InstalledCSV; {
	case installed != "":
		return find(func(b Bundle) bool { return b.Replaces == installed })
	case sub.Spec.StartingCSV != "":
		return find(func(b Bundle) bool { return b.CSV == sub.Spec.StartingCSV })
	}
	return find(func(b Bundle) bool {
		return !slices.ContainsFunc(inChannel, func(other Bundle) bool { return other.Replaces == b.CSV })
	})
}

// Reconcile plays OLM on one namespace (the request's name).
func (o *OLM) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	namespace := req.Name
	if o.isHeld(namespace) {
		return ctrl.Result{}, nil
	}
	plans := &operatorsv1alpha1.InstallPlanList{}
	if err := o.reader.List(ctx, plans, client.InNamespace(namespace)); err != nil {
		return ctrl.Result{}, err
	}
	for i := range plans.Items {
		plan := &plans.Items[i]
		if plan.Spec.Approved && plan.Status.Phase != operatorsv1alpha1.InstallPlanPhaseComplete {
			if err := o.install(ctx, plan); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if err := o.promoteInstalling(ctx, namespace); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, o.resolve(ctx, namespace, plans.Items)
}

// resolve puts every Subscription of the namespace that can move into one new
// InstallPlan.
func (o *OLM) resolve(ctx context.Context, namespace string, plans []operatorsv1alpha1.InstallPlan) error {
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := o.reader.List(ctx, subs, client.InNamespace(namespace)); err != nil {
		return err
	}
	slices.SortFunc(subs.Items, func(a, b operatorsv1alpha1.Subscription) int { return strings.Compare(a.Name, b.Name) })
	approval := operatorsv1alpha1.ApprovalAutomatic
	type target struct {
		sub    *operatorsv1alpha1.Subscription
		bundle Bundle
	}
	var targets []target
	for i := range subs.Items {
		sub := &subs.Items[i]
		if sub.Spec == nil || !sub.DeletionTimestamp.IsZero() {
			continue
		}
		if sub.Spec.InstallPlanApproval == operatorsv1alpha1.ApprovalManual {
			approval = operatorsv1alpha1.ApprovalManual
		}
		if sub.Status.CurrentCSV != "" && sub.Status.CurrentCSV != sub.Status.InstalledCSV {
			continue // waiting for its InstallPlan
		}
		b, ok := o.next(sub)
		if !ok {
			continue
		}
		// A plan already made for it (whose Subscription update failed) is reused.
		if i := slices.IndexFunc(plans, func(p operatorsv1alpha1.InstallPlan) bool {
			return p.Status.Phase != operatorsv1alpha1.InstallPlanPhaseComplete && slices.Contains(p.Spec.ClusterServiceVersionNames, b.CSV)
		}); i >= 0 {
			if err := o.pointSubscription(ctx, sub, &plans[i], b.CSV); err != nil {
				return err
			}
			continue
		}
		targets = append(targets, target{sub: sub, bundle: b})
	}
	if len(targets) == 0 {
		return nil
	}

	generation := 0
	for _, p := range plans {
		generation = max(generation, p.Spec.Generation)
	}
	plan := &operatorsv1alpha1.InstallPlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "install-"},
		Spec: operatorsv1alpha1.InstallPlanSpec{
			Approval:   approval,
			Approved:   approval == operatorsv1alpha1.ApprovalAutomatic,
			Generation: generation + 1,
		},
	}
	var catalogs []string
	for _, t := range targets {
		plan.Spec.ClusterServiceVersionNames = append(plan.Spec.ClusterServiceVersionNames, t.bundle.CSV)
		catalogs = append(catalogs, t.sub.Spec.CatalogSource)
	}
	slices.Sort(catalogs)
	if err := o.client.Create(ctx, plan); err != nil {
		return err
	}
	plan.Status.Phase = operatorsv1alpha1.InstallPlanPhaseRequiresApproval
	if plan.Spec.Approved {
		plan.Status.Phase = operatorsv1alpha1.InstallPlanPhaseInstalling
	}
	plan.Status.CatalogSources = slices.Compact(catalogs)
	for _, t := range targets {
		properties, err := json.Marshal(map[string]any{"properties": []any{
			map[string]any{"type": "olm.package", "value": map[string]string{"packageName": t.bundle.Package, "version": t.bundle.CSV}},
		}})
		if err != nil {
			return err
		}
		plan.Status.BundleLookups = append(plan.Status.BundleLookups, operatorsv1alpha1.BundleLookup{
			Path:       "olmfake.invalid/" + t.bundle.CSV,
			Identifier: t.bundle.CSV,
			Replaces:   t.bundle.Replaces,
			CatalogSourceRef: &corev1.ObjectReference{
				Namespace: t.sub.Spec.CatalogSourceNamespace, Name: t.sub.Spec.CatalogSource,
			},
			Properties: string(properties),
		})
	}
	if err := o.client.Status().Update(ctx, plan); err != nil {
		return err
	}

	for _, t := range targets {
		if err := o.pointSubscription(ctx, t.sub, plan, t.bundle.CSV); err != nil {
			return err
		}
	}
	return nil
}

// pointSubscription records on a Subscription that plan installs csv for it.
func (o *OLM) pointSubscription(ctx context.Context, sub *operatorsv1alpha1.Subscription, plan *operatorsv1alpha1.InstallPlan, csv string) error {
	now := metav1.Now()
	sub.Status.CurrentCSV = csv
	sub.Status.State = operatorsv1alpha1.SubscriptionStateUpgradePending
	sub.Status.LastUpdated = now
	sub.Status.InstallPlanGeneration = plan.Spec.Generation
	sub.Status.InstallPlanRef = &corev1.ObjectReference{
		APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.InstallPlanKind,
		Namespace: plan.Namespace, Name: plan.Name, UID: plan.UID,
	}
	sub.Status.Install = &operatorsv1alpha1.InstallPlanReference{
		APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.InstallPlanKind,
		Name: plan.Name, UID: plan.UID,
	}
	if !plan.Spec.Approved {
		sub.Status.SetCondition(operatorsv1alpha1.SubscriptionCondition{
			Type: operatorsv1alpha1.SubscriptionInstallPlanPending, Status: corev1.ConditionTrue,
			Reason: string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval), LastTransitionTime: &now,
		})
	}
	return o.client.Status().Update(ctx, sub)
}

// install carries out an approved InstallPlan.
func (o *OLM) install(ctx context.Context, plan *operatorsv1alpha1.InstallPlan) error {
	namespace := plan.Namespace
	for _, csvName := range plan.Spec.ClusterServiceVersionNames {
		b, ok := o.bundle(csvName)
		if !ok {
			return fmt.Errorf("olmfake: InstallPlan %s/%s names %s, which no catalog has", namespace, plan.Name, csvName)
		}
		if err := o.installBundle(ctx, namespace, b); err != nil {
			return err
		}
	}
	plan.Status.Phase = operatorsv1alpha1.InstallPlanPhaseComplete
	if err := o.client.Status().Update(ctx, plan); err != nil {
		return err
	}

	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := o.reader.List(ctx, subs, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range subs.Items {
		sub := &subs.Items[i]
		if sub.Status.InstallPlanRef == nil || sub.Status.InstallPlanRef.Name != plan.Name {
			continue
		}
		sub.Status.InstalledCSV = sub.Status.CurrentCSV
		sub.Status.State = operatorsv1alpha1.SubscriptionStateAtLatest
		sub.Status.LastUpdated = metav1.Now()
		sub.Status.RemoveConditions(operatorsv1alpha1.SubscriptionInstallPlanPending)
		if err := o.client.Status().Update(ctx, sub); err != nil {
			return err
		}
	}
	return nil
}

// installBundle creates the bundle's CRDs, Deployments and CSV, and deletes the
// CSV it replaces.
func (o *OLM) installBundle(ctx context.Context, namespace string, b Bundle) error {
	for _, name := range b.CRDs {
		if err := o.createCRD(ctx, name); err != nil {
			return err
		}
	}
	available := true
	var specs []operatorsv1alpha1.StrategyDeploymentSpec
	for _, name := range b.Deployments {
		d, err := o.applyDeployment(ctx, namespace, name, b.CSV)
		if err != nil {
			return err
		}
		available = available && o.isAvailable(types.NamespacedName{Namespace: namespace, Name: name})
		specs = append(specs, operatorsv1alpha1.StrategyDeploymentSpec{Name: name, Spec: d.Spec})
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: b.CSV,
			Labels: map[string]string{operatorpolicy.OperatorLabel(b.Package, namespace): ""},
		},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			DisplayName: b.Package,
			Replaces:    b.Replaces,
			InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{
				StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
				StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{DeploymentSpecs: specs},
			},
			InstallModes: []operatorsv1alpha1.InstallMode{
				{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
		},
	}
	for _, name := range b.CRDs {
		plural, _, _ := strings.Cut(name, ".")
		csv.Spec.CustomResourceDefinitions.Owned = append(csv.Spec.CustomResourceDefinitions.Owned, operatorsv1alpha1.CRDDescription{
			Name: name, Version: "v1", Kind: crdKind(plural),
		})
	}
	if err := o.client.Create(ctx, csv); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := o.reader.Get(ctx, client.ObjectKeyFromObject(csv), csv); err != nil {
		return err
	}
	setCSVPhase(csv, available)
	if err := o.client.Status().Update(ctx, csv); err != nil {
		return err
	}
	if b.Replaces != "" {
		old := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: b.Replaces}}
		if err := o.client.Delete(ctx, old); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func setCSVPhase(csv *operatorsv1alpha1.ClusterServiceVersion, available bool) {
	now := metav1.Now()
	csv.Status.LastUpdateTime, csv.Status.LastTransitionTime = &now, &now
	if available {
		csv.Status.Phase = operatorsv1alpha1.CSVPhaseSucceeded
		csv.Status.Reason = operatorsv1alpha1.CSVReasonInstallSuccessful
		csv.Status.Message = "install strategy completed with no errors"
		return
	}
	csv.Status.Phase = operatorsv1alpha1.CSVPhaseInstalling
	csv.Status.Reason = operatorsv1alpha1.CSVReasonWaiting
	csv.Status.Message = "installing: waiting for deployment to become ready"
}

// promoteInstalling moves the namespace's Installing CSVs whose Deployments
// are all available to Succeeded.
func (o *OLM) promoteInstalling(ctx context.Context, namespace string) error {
	csvs := &operatorsv1alpha1.ClusterServiceVersionList{}
	if err := o.reader.List(ctx, csvs, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range csvs.Items {
		csv := &csvs.Items[i]
		if csv.Status.Phase != operatorsv1alpha1.CSVPhaseInstalling {
			continue
		}
		available := true
		for _, spec := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
			available = available && o.isAvailable(types.NamespacedName{Namespace: namespace, Name: spec.Name})
		}
		if !available {
			continue
		}
		setCSVPhase(csv, true)
		if err := o.client.Status().Update(ctx, csv); err != nil {
			return err
		}
	}
	return nil
}

// crdKind makes a Kind from a plural: "widgets" -> "Widget".
func crdKind(plural string) string {
	singular := strings.TrimSuffix(plural, "s")
	return strings.ToUpper(singular[:1]) + singular[1:]
}

func (o *OLM) createCRD(ctx context.Context, name string) error {
	plural, group, _ := strings.Cut(name, ".")
	kind := crdKind(plural)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	if err := o.client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// applyDeployment creates or updates an operator Deployment and writes its status.
func (o *OLM) applyDeployment(ctx context.Context, namespace, name, csv string) (*appsv1.Deployment, error) {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	err := o.reader.Get(ctx, client.ObjectKeyFromObject(d), d)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	d.Labels = map[string]string{
		"olm.managed": "true", "olm.owner": csv, "olm.owner.kind": operatorsv1alpha1.ClusterServiceVersionKind, "olm.owner.namespace": namespace,
	}
	d.Spec = appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "operator", Image: "olmfake.invalid/" + csv,
			}}},
		},
	}
	if apierrors.IsNotFound(err) {
		err = o.client.Create(ctx, d)
	} else {
		err = o.client.Update(ctx, d)
	}
	if err != nil {
		return nil, err
	}
	return d, o.writeDeploymentStatus(ctx, d)
}

// writeDeploymentStatus writes the status a kubelet and the deployment
// controller would: one replica, available or not as the test says.
func (o *OLM) writeDeploymentStatus(ctx context.Context, d *appsv1.Deployment) error {
	available := o.isAvailable(client.ObjectKeyFromObject(d))
	status := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1}
	condition := appsv1.DeploymentCondition{
		Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
		Message: "Deployment does not have minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}
	if available {
		status.ReadyReplicas, status.AvailableReplicas = 1, 1
		condition.Status, condition.Reason, condition.Message = corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability."
	} else {
		status.UnavailableReplicas = 1
	}
	status.Conditions = []appsv1.DeploymentCondition{condition}
	d.Status = status
	return o.client.Status().Update(ctx, d)
}
