package spoke_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// TestPruneUninstallReleasesFinalizers uninstalls a spoke as docs/pruning.md
// says, on a managed cluster of its own: deleting the ConfigurationPolicy CRD while the
// spoke runs deletes every ConfigurationPolicy, and the spoke releases their
// prune finalizers without deleting anything, so the CRD goes and the
// ConfigMap an enforced DeleteAll policy created stays.
func TestPruneUninstallReleasesFinalizers(t *testing.T) {
	// A cluster of its own, under another name: the shared spoke's cluster
	// namespace on the hub is not this spoke's.
	const cluster, data = "cluster-uninstall", "uninstall-data"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plane, err := localplane.Start("spoke-uninstall")
	testkit.FatalOrSkip(t, "starting the spoke-uninstall API server", err)
	t.Cleanup(func() {
		if err := plane.Stop(); err != nil {
			t.Log(err)
		}
	})
	managed := plane.Client
	if err := localplane.EnsureCluster(ctx, hubC, cluster); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{cluster, data} {
		if err := localplane.EnsureNamespace(ctx, managed, ns); err != nil {
			t.Fatal(err)
		}
	}
	running := spoketest.Start(t, hubConfig, plane.Config, cluster)
	defer func() {
		if stopped, err := running.Stopped(); stopped && err != nil {
			t.Error(err)
		}
	}()

	if err := localplane.ApplyManifests(ctx, managed, t.Name(),
		`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: uninstall, namespace: `+cluster+`},
        spec: {remediationAction: enforce, pruneObjectBehavior: DeleteAll, object-templates: [{complianceType: musthave,
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: made, namespace: `+data+`}}}]}}`); err != nil {
		t.Fatal(err)
	}
	made := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "made"}}
	cp := &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "uninstall"}}
	testkit.Eventually(t, 45*time.Second, "the policy creates its ConfigMap and holds the finalizer", func() string {
		if err := managed.Get(ctx, client.ObjectKeyFromObject(made), made); err != nil {
			return err.Error()
		}
		if err := managed.Get(ctx, client.ObjectKeyFromObject(cp), cp); err != nil {
			return err.Error()
		}
		if !controllerutil.ContainsFinalizer(cp, configpolicy.PruneFinalizer) {
			return "no prune finalizer"
		}
		return ""
	})

	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "configurationpolicies.policy.open-cluster-management.io"}}
	if err := managed.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "the CRD goes: its policies' finalizers are released", func() string {
		if exists(t, managed, crd) {
			return "the CRD is still there, finalizers " + strings.Join(crd.Finalizers, ", ")
		}
		return ""
	})
	if !exists(t, managed, made) {
		t.Error("uninstalling deleted the ConfigMap the policy created")
	}
}
