package manifesttest

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hubtoken"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestSpokeRenewsItsHubToken gives the spoke's hub identity of
// manifests/spoke/hub nothing but a short bootstrap token, bound to a Secret,
// renews it with package hubtoken, then revokes the bootstrap token (deleting
// the Secret): the spoke keeps reaching the hub on the token it renewed, so no
// non-expiring token Secret is needed.
func TestSpokeRenewsItsHubToken(t *testing.T) {
	hub, err := localplane.Start("hub")
	testkit.FatalOrSkip(t, "starting the hub API server", err)
	t.Cleanup(func() { _ = hub.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	applyRendered(t, hub.Client, "hub RBAC of cluster1", hubRBACFor(t, "cluster1"))

	// The bootstrap token, bound to a Secret so that the test can revoke it.
	admin, err := kubernetes.NewForConfig(hub.Config)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "bootstrap"}}
	if err := hub.Client.Create(ctx, bootstrap); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("cluster1").CreateToken(ctx, "fleetpolicy-spoke", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To[int64](600),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Secret", Name: "bootstrap", UID: bootstrap.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withToken := func(token string) *rest.Config {
		cfg := rest.AnonymousClientConfig(hub.Config)
		cfg.BearerToken = token
		return cfg
	}
	listPolicies := func(cfg *rest.Config) error {
		c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		if err != nil {
			return err
		}
		return c.List(ctx, &policyv1.PolicyList{}, client.InNamespace("cluster1"))
	}

	renewing, ok, err := hubtoken.Renewing(ctx, withToken(tr.Status.Token), time.Hour, testr.New(t))
	if err != nil || !ok {
		t.Fatalf("Renewing: %v, renewing %v; want a renewing config for the ServiceAccount", err, ok)
	}
	if err := listPolicies(renewing); err != nil {
		t.Fatalf("the spoke cannot reach the hub with its renewed token: %v", err)
	}

	if err := hub.Client.Delete(ctx, bootstrap); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the bootstrap token is revoked", func() string {
		if err := listPolicies(withToken(tr.Status.Token)); !apierrors.IsUnauthorized(err) {
			return "the bootstrap token still works: " + errString(err)
		}
		return ""
	})
	if err := listPolicies(renewing); err != nil {
		t.Errorf("with the bootstrap token revoked, the spoke lost the hub: %v", err)
	}

	// An identity that is not a ServiceAccount's is left as it is.
	if _, ok, err := hubtoken.Renewing(ctx, hub.Config, time.Hour, testr.New(t)); err != nil || ok {
		t.Errorf("Renewing the admin's config: %v, renewing %v; want it left alone", err, ok)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
