package hub_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
)

// TestReadyOnlyWhenControllersStarted starts the hub as a user who may not
// list RolloutPlans: the propagator cannot sync its caches, so /readyz fails
// its "controllers" check (it answered 200 at once when it only pinged). Once the user
// may, the propagator starts and /readyz turns 200.
func TestReadyOnlyWhenControllersStarted(t *testing.T) {
	ctx := context.Background()
	const user = "readiness-test-hub"
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"", "events.k8s.io", "coordination.k8s.io", "policy.open-cluster-management.io",
				"cluster.open-cluster-management.io", "apps.open-cluster-management.io"},
			Resources: []string{"*"}, Verbs: []string{"*"},
		}},
	}
	roleBinding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{role, roleBinding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
	probes, err := localplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(plane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	hubtest.Start(t, cfg, func(o *hub.ManagerOptions) { o.ProbeAddr = probes })
	grant := func() error {
		role.Rules = append(role.Rules, rbacv1.PolicyRule{
			APIGroups: []string{"fleetpolicy.io"}, Resources: []string{"*"}, Verbs: []string{"*"},
		})
		return c.Update(ctx, role)
	}
	granted := false
	// The hub stops (cleanups run last first) only once its caches can sync.
	t.Cleanup(func() {
		if !granted {
			_ = grant()
		}
	})

	readyz := func() (int, string) {
		resp, err := http.Get("http://" + probes + "/readyz?verbose")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// Up, but not ready: for a few seconds, every answer fails the
	// controllers check (controller-runtime withholds the reason, which names
	// the propagator, from the answer and logs it).
	testkit.Eventually(t, 30*time.Second, "the probe server answers", func() string {
		if code, body := readyz(); code == 0 {
			return body
		}
		return ""
	})
	for range 20 {
		code, body := readyz()
		if code != http.StatusInternalServerError || !strings.Contains(body, "[-]controllers failed") {
			t.Fatalf("readyz while RolloutPlans cannot be listed: %d %s, want 500 failing the controllers check", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	granted = true
	if err := grant(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 90*time.Second, "/readyz answers 200", func() string {
		if code, body := readyz(); code != http.StatusOK {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
}
