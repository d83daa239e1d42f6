package localplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountToken creates ServiceAccount namespace/name (and its namespace)
// unless it exists and returns a bound token for it from the TokenRequest API:
// a bearer token the API server's TokenReview accepts, as a caller of the
// hub's authenticated endpoints presents.
func ServiceAccountToken(ctx context.Context, c client.Client, namespace, name string) (string, error) {
	if err := EnsureNamespace(ctx, c, namespace); err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("service account %s/%s: %w", namespace, name, err)
	}
	request := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, request); err != nil {
		return "", fmt.Errorf("token of service account %s/%s: %w", namespace, name, err)
	}
	return request.Status.Token, nil
}

// HubRoleToken is ServiceAccountToken for a ServiceAccount bound to ClusterRole
// role of manifests/hub/rbac.yaml, which it applies from the repository (for
// example fleetpolicy-explain, whose holders may POST the hub's /explain).
func HubRoleToken(ctx context.Context, c client.Client, namespace, name, role string) (string, error) {
	token, err := ServiceAccountToken(ctx, c, namespace, name)
	if err != nil {
		return "", err
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	const rbac = "manifests/hub/rbac.yaml"
	f, err := os.Open(filepath.Join(root, rbac))
	if err != nil {
		return "", err
	}
	defer f.Close()
	objs, err := ReadManifests(rbac, f)
	if err != nil {
		return "", err
	}
	var roles []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" && o.GetName() == role {
			roles = append(roles, o)
		}
	}
	if len(roles) != 1 {
		return "", fmt.Errorf("%s has %d ClusterRoles %s, want 1", rbac, len(roles), role)
	}
	if _, err := Apply(ctx, c, roles); err != nil {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + "-" + namespace + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}
	if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("binding %s: %w", binding.Name, err)
	}
	return token, nil
}
