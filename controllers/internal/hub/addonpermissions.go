package hub

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

const (
	// AddonName is the name of fleetpolicy's OCM add-on (manifests/addon):
	// its ClusterManagementAddOn and each cluster's ManagedClusterAddOn.
	AddonName = "fleetpolicy"
	// AddonHubClusterRole is what each cluster's add-on may do on the hub,
	// in its cluster's namespace (manifests/addon/hub-permissions.yaml).
	AddonHubClusterRole = "fleetpolicy-addon-hub"
	// addonHubRoleBinding binds AddonHubClusterRole in a cluster namespace.
	addonHubRoleBinding = "fleetpolicy-addon-hub"
	// addonPermissionsResync is how often a binding is checked again even
	// when its ManagedClusterAddOn did not change (one deleted by hand comes
	// back).
	addonPermissionsResync = 10 * time.Minute
)

// AddonPermissions gives each cluster's fleetpolicy add-on its hub
// permissions: a RoleBinding, in the cluster's namespace, of
// AddonHubClusterRole to the identity OCM registration issued for that
// cluster's add-on (addonHubSubjects), owned by the ManagedClusterAddOn so
// that removing the add-on removes it (garbage collection). OCM's addon
// manager could bind it from the AddOnTemplate (hubPermissions, CurrentCluster),
// but binds the group every cluster's add-on holds
// (system:open-cluster-management:addon:fleetpolicy), which would let any
// cluster's spoke read every other cluster's policies and encryption key.
type AddonPermissions struct {
	Client client.Client
	// Reader reads RoleBindings from the API server (the hub does not cache
	// every RoleBinding of the cluster).
	Reader client.Reader
}

// Reconcile makes the binding of one ManagedClusterAddOn what it should be.
func (a *AddonPermissions) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != AddonName {
		return ctrl.Result{}, nil
	}
	addon := &addonv1alpha1.ManagedClusterAddOn{}
	if err := a.Client.Get(ctx, req.NamespacedName, addon); err != nil || addon.DeletionTimestamp != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want := addonHubRoleBindingFor(addon)
	if want == nil {
		return ctrl.Result{}, nil // no identity registered yet: the status update requeues
	}
	have := &rbacv1.RoleBinding{}
	err := a.Reader.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		err = a.Client.Create(ctx, want)
		if err == nil {
			log.FromContext(ctx).Info("bound the add-on's hub permissions", "cluster", addon.Namespace, "subjects", want.Subjects)
		}
	case err != nil:
	case !equality.Semantic.DeepEqual(have.RoleRef, want.RoleRef):
		// A RoleBinding's roleRef cannot change: delete it, and create it
		// at the next reconcile.
		err = a.Client.Delete(ctx, have, client.Preconditions{UID: &have.UID})
		if err == nil {
			return ctrl.Result{Requeue: true}, nil
		}
	case !equality.Semantic.DeepEqual(have.Subjects, want.Subjects) || !equality.Semantic.DeepEqual(have.OwnerReferences, want.OwnerReferences):
		have.Subjects, have.OwnerReferences = want.Subjects, want.OwnerReferences
		err = a.Client.Update(ctx, have)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: addonPermissionsResync}, nil
}

// addonHubRoleBindingFor is the RoleBinding of the add-on's hub permissions
// in its cluster's namespace, nil until the add-on has a registered identity.
func addonHubRoleBindingFor(addon *addonv1alpha1.ManagedClusterAddOn) *rbacv1.RoleBinding {
	subjects := addonHubSubjects(addon)
	if len(subjects) == 0 {
		return nil
	}
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: addon.Namespace,
			Name:      addonHubRoleBinding,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "fleetpolicy-hub"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: addonv1alpha1.GroupVersion.String(), Kind: "ManagedClusterAddOn",
				Name: addon.Name, UID: addon.UID, BlockOwnerDeletion: ptr.To(false),
			}},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AddonHubClusterRole},
		Subjects: subjects,
	}
}

// addonHubSubjects are the subjects of the identity OCM registration issued
// for the add-on on its cluster (status.registrations, the
// kubernetes.io/kube-apiserver-client signer) that no other cluster's add-on
// holds: its user, and of its groups only those that name its cluster
// (system:open-cluster-management:cluster:<cluster>:addon:<addon>); never
// the fleet-wide system:open-cluster-management:addon:<addon> nor
// system:authenticated.
func addonHubSubjects(addon *addonv1alpha1.ManagedClusterAddOn) []rbacv1.Subject {
	clusterGroup := "system:open-cluster-management:cluster:" + addon.Namespace + ":addon:"
	var subjects []rbacv1.Subject
	for _, r := range addon.Status.Registrations {
		if r.SignerName != "kubernetes.io/kube-apiserver-client" {
			continue
		}
		if r.Subject.User != "" {
			subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: r.Subject.User})
		}
		for _, g := range r.Subject.Groups {
			if strings.HasPrefix(g, clusterGroup) {
				subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
			}
		}
	}
	slices.SortFunc(subjects, func(a, b rbacv1.Subject) int { return strings.Compare(a.Kind+a.Name, b.Kind+b.Name) })
	return slices.Compact(subjects)
}

// servesAddons says whether the hub serves OCM's add-on API
// (ManagedClusterAddOns), asked once when the hub starts.
func servesAddons(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	resources, err := dc.ServerResourcesForGroupVersion(addonv1alpha1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("asking the hub whether it serves OCM's add-on API: %w", err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "managedclusteraddons" {
			return true, nil
		}
	}
	return false, nil
}
