package manifesttest

import (
	"bytes"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

// rulesOf returns the rules of the Role or ClusterRole kind/name in a
// rendered kustomization, failing the test unless there is exactly one.
func rulesOf(t *testing.T, rendered []byte, kind, name string) []rbacv1.PolicyRule {
	t.Helper()
	objs, err := localplane.ReadManifests(kind+" "+name, bytes.NewReader(rendered))
	if err != nil {
		t.Fatal(err)
	}
	var found []rbacv1.ClusterRole // a Role's rules decode the same
	for _, o := range objs {
		if o.GetKind() != kind || o.GetName() != name {
			continue
		}
		var r rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
			t.Fatal(err)
		}
		found = append(found, r)
	}
	if len(found) != 1 {
		t.Fatalf("%d %s %s rendered, want 1", len(found), kind, name)
	}
	return found[0].Rules
}

// TestAddonHubPermissionsAreTheHandWiredSpokes: the add-on's spoke may do on
// the hub exactly what manifests/spoke/hub lets a hand-wired spoke do, but
// renew a ServiceAccount token (OCM rotates the add-on's certificate), and the
// hub binds the role the manifests define.
func TestAddonHubPermissionsAreTheHandWiredSpokes(t *testing.T) {
	addon := rulesOf(t, kustomizeBuild(t, "manifests/addon"), "ClusterRole", hub.AddonHubClusterRole)
	handWired := slices.DeleteFunc(rulesOf(t, hubRBACFor(t, "cluster1"), "Role", "fleetpolicy-spoke"), func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.Resources, []string{"serviceaccounts/token"})
	})
	if !equality.Semantic.DeepEqual(addon, handWired) {
		t.Errorf("the add-on's hub rules differ from manifests/spoke/hub's (token renewal aside):\nadd-on:     %+v\nhand-wired: %+v", addon, handWired)
	}
}
