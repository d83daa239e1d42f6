package manifesttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// hubRBACFor renders manifests/spoke/hub for one cluster, through an overlay
// that sets the cluster's namespace as a user would.
func hubRBACFor(t *testing.T, clusterName string) []byte {
	t.Helper()
	root := testkit.RepoRoot(t)
	overlay := t.TempDir()
	base, err := filepath.Rel(overlay, filepath.Join(root, "manifests/spoke/hub"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources: [%s]\n", clusterName, base)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	// kustomizeBuild takes a path relative to the repository root.
	rel, err := filepath.Rel(root, overlay)
	if err != nil {
		t.Fatal(err)
	}
	return kustomizeBuild(t, rel)
}

func applyRendered(t *testing.T, c client.Client, name string, rendered []byte) {
	t.Helper()
	objs, err := localplane.ReadManifests(name, bytes.NewReader(rendered))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localplane.Apply(context.Background(), c, objs); err != nil {
		t.Fatal(err)
	}
}

// TestSpokeRBACIsSufficientAndLeast deploys manifests/spoke on a managed
// cluster and manifests/spoke/hub (for cluster1 and cluster2) on a hub, runs the
// spoke controller impersonating its ServiceAccounts on both, and checks that it
// syncs, enforces and reports a policy and copies the cluster's encryption key
// — and that its hub identity cannot read another cluster's namespace, change
// a policy's spec, read Secrets (but the encryption key it copies) nor write
// Events elsewhere.
func TestSpokeRBACIsSufficientAndLeast(t *testing.T) {
	fleet := testkit.StartFleet(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hubAdmin, managedAdmin := fleet.Hub.Client, fleet.Spokes[0].Client

	applyRendered(t, hubAdmin, "hub RBAC of cluster1", hubRBACFor(t, "cluster1"))
	applyRendered(t, hubAdmin, "hub RBAC of cluster2", hubRBACFor(t, "cluster2"))
	applyRendered(t, managedAdmin, "manifests/spoke", kustomizeBuild(t, "manifests/spoke"))

	hubCfg := rest.CopyConfig(fleet.Hub.Config)
	hubCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:cluster1:fleetpolicy-spoke"}
	managedCfg := rest.CopyConfig(fleet.Spokes[0].Config)
	managedCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:fleetpolicy-system:fleetpolicy-spoke"}
	spoketest.StartWith(t, hubCfg, managedCfg, "cluster1", func(o *spoke.ManagerOptions) {
		o.LeaderElect, o.LeaderElectionNamespace = true, "fleetpolicy-system"
	})

	// The hub's replicas, written as the hub controller would.
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "rbac", Name: "p"},
		Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"p-cm"},` +
				`"spec":{"remediationAction":"enforce","object-templates":[{"complianceType":"musthave","objectDefinition":` +
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"enforced","namespace":"default"},"data":{"k":"v"}}}]}}`)}}},
		},
	}
	for _, cluster := range []string{"cluster1", "cluster2"} {
		if err := hubAdmin.Create(ctx, replication.Build(root, cluster, policyv1.Enforce, nil)); err != nil {
			t.Fatal(err)
		}
	}

	// The cluster's encryption key, which the spoke copies, next to a Secret
	// it may not read.
	for _, name := range []string{templates.EncryptionKeySecret, "not-for-the-spoke"} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: name}, Data: map[string][]byte{"key": []byte(name)}}
		if err := hubAdmin.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		replica := &policyv1.Policy{}
		cm := &corev1.ConfigMap{}
		events := &corev1.EventList{}
		key := &corev1.Secret{}
		rerr := hubAdmin.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "rbac.p"}, replica)
		cerr := managedAdmin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "enforced"}, cm)
		eerr := hubAdmin.List(ctx, events, client.InNamespace("cluster1"))
		kerr := managedAdmin.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: templates.EncryptionKeySecret}, key)
		if rerr == nil && cerr == nil && eerr == nil && kerr == nil && replica.Status.ComplianceState == policyv1.Compliant &&
			replica.Status.ObservedGeneration == replica.Generation && len(events.Items) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spoke running as its ServiceAccounts did not sync, enforce, report and copy the key: replica %v %+v, ConfigMap %v, hub events %d, key copy %v",
				rerr, replica.Status, cerr, len(events.Items), kerr)
		}
		time.Sleep(100 * time.Millisecond)
	}

	sa, err := client.New(hubCfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	other := &policyv1.Policy{}
	if err := sa.Get(ctx, client.ObjectKey{Namespace: "cluster2", Name: "rbac.p"}, other); !apierrors.IsForbidden(err) {
		t.Errorf("the spoke's hub identity can read a policy of another cluster: %v", err)
	}
	if err := sa.List(ctx, &policyv1.PolicyList{}, client.InNamespace("cluster2")); !apierrors.IsForbidden(err) {
		t.Errorf("the spoke's hub identity can list the policies of another cluster: %v", err)
	}
	if err := sa.List(ctx, &corev1.SecretList{}, client.InNamespace("cluster1")); !apierrors.IsForbidden(err) {
		t.Errorf("the spoke's hub identity can list Secrets of its namespace: %v", err)
	}
	if err := sa.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "not-for-the-spoke"}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Errorf("the spoke's hub identity can read a Secret other than the encryption key: %v", err)
	}
	own := &policyv1.Policy{}
	if err := hubAdmin.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "rbac.p"}, own); err != nil {
		t.Fatal(err)
	}
	own.Spec.Disabled = true
	if err := sa.Update(ctx, own); !apierrors.IsForbidden(err) {
		t.Errorf("the spoke's hub identity can change a policy's spec: %v", err)
	}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "cluster2", Name: "forged"},
		InvolvedObject: corev1.ObjectReference{Kind: "Policy", Namespace: "cluster2", Name: "rbac.p"},
		Reason:         "policy: cluster2/p-cm", Message: "Compliant; forged",
	}
	if err := sa.Create(ctx, event); !apierrors.IsForbidden(err) {
		t.Errorf("the spoke's hub identity can write Events in another cluster's namespace: %v", err)
	}
}
