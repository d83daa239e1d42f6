package hub

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
)

// TestAddonHubSubjects: the add-on's hub permissions go to what identifies
// that cluster's add-on alone, never to a group every cluster's add-on holds.
func TestAddonHubSubjects(t *testing.T) {
	user := func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: n}
	}
	group := func(n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: n}
	}
	const agentUser = "system:open-cluster-management:cluster:cluster1:addon:fleetpolicy:agent:fleetpolicy-agent"
	for _, tc := range []struct {
		name          string
		registrations []addonv1alpha1.RegistrationConfig
		want          []rbacv1.Subject
	}{
		{name: "nothing registered yet"},
		{
			name: "OCM's certificate identity: the user and the cluster's group, not the fleet-wide group nor system:authenticated",
			registrations: []addonv1alpha1.RegistrationConfig{{
				SignerName: "kubernetes.io/kube-apiserver-client",
				Subject: addonv1alpha1.Subject{User: agentUser, Groups: []string{
					"system:open-cluster-management:cluster:cluster1:addon:fleetpolicy",
					"system:open-cluster-management:addon:fleetpolicy",
					"system:authenticated",
				}},
			}},
			want: []rbacv1.Subject{group("system:open-cluster-management:cluster:cluster1:addon:fleetpolicy"), user(agentUser)},
		},
		{
			name: "another cluster's group is not this cluster's",
			registrations: []addonv1alpha1.RegistrationConfig{{
				SignerName: "kubernetes.io/kube-apiserver-client",
				Subject:    addonv1alpha1.Subject{Groups: []string{"system:open-cluster-management:cluster:cluster10:addon:fleetpolicy"}},
			}},
		},
		{
			name: "a custom signer's identity does not reach the hub API server",
			registrations: []addonv1alpha1.RegistrationConfig{{
				SignerName: "example.com/signer",
				Subject:    addonv1alpha1.Subject{User: "someone"},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addon := &addonv1alpha1.ManagedClusterAddOn{
				ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: AddonName, UID: "u1"},
				Status:     addonv1alpha1.ManagedClusterAddOnStatus{Registrations: tc.registrations},
			}
			got := addonHubSubjects(addon)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("subjects = %+v, want %+v", got, tc.want)
			}
			binding := addonHubRoleBindingFor(addon)
			if (binding == nil) != (len(tc.want) == 0) {
				t.Fatalf("binding %+v for subjects %+v", binding, tc.want)
			}
			if binding != nil && (binding.Namespace != "cluster1" || binding.RoleRef.Name != AddonHubClusterRole ||
				len(binding.OwnerReferences) != 1 || binding.OwnerReferences[0].UID != "u1") {
				t.Errorf("binding %+v: want one in cluster1, of %s, owned by the ManagedClusterAddOn", binding, AddonHubClusterRole)
			}
		})
	}
}
