package manifesttest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// kustomizeBuild renders a base with the repository's kustomize.
func kustomizeBuild(t *testing.T, base string) []byte { return testkit.KustomizeBuild(t, base) }

// TestHubRBACIsSufficientAndLeast deploys manifests/hub's RBAC to a real API
// server, runs the hub controller as its ServiceAccount (with leader election in
// its namespace) and checks that it decides on a PlacementRule's clusters,
// propagates a policy and writes root status and the replica's rolloutStatus —
// and that the same identity cannot change Secrets (other than the clusters'
// encryption keys) nor bindings.
func TestHubRBACIsSufficientAndLeast(t *testing.T) {
	plane := startWithHubManifests(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := plane.Client

	cfg := rest.CopyConfig(plane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:fleetpolicy-system:fleetpolicy-hub"}
	hubtest.Start(t, cfg, func(o *hub.ManagerOptions) {
		o.LeaderElect, o.LeaderElectionNamespace = true, "fleetpolicy-system"
	})

	if err := localplane.EnsureCluster(ctx, admin, "cluster-1"); err != nil {
		t.Fatal(err)
	}
	objs, err := localplane.ReadManifests("rbac case", bytes.NewBufferString(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: p, namespace: rbac}
spec:
  disabled: false
  remediationAction: inform
  policy-templates: []
---
apiVersion: apps.open-cluster-management.io/v1
kind: PlacementRule
metadata: {name: r, namespace: rbac}
spec: {clusters: [{name: cluster-1}]}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: rbac}
placementRef: {apiGroup: apps.open-cluster-management.io, kind: PlacementRule, name: r}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}, {apiGroup: policy.open-cluster-management.io, kind: Policy, name: templated}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: rbac}
data: {k: from-configmap}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: rbac}
stringData: {k: from-secret}
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: templated, namespace: rbac}
spec:
  disabled: false
  remediationAction: inform
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: templated}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: out, namespace: default}
            data:
              plain: '{{hub fromConfigMap "rbac" "cm" "k" hub}}'
              secret: '{{hub fromSecret "rbac" "s" "k" hub}}'
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localplane.Apply(ctx, admin, objs); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		root := &policyv1.Policy{}
		replica := &policyv1.Policy{}
		rerr := admin.Get(ctx, client.ObjectKey{Namespace: "cluster-1", Name: "rbac.p"}, replica)
		gerr := admin.Get(ctx, client.ObjectKey{Namespace: "rbac", Name: "p"}, root)
		// Hub templates resolved as the hub: a ConfigMap and a Secret read,
		// the cluster's encryption key created.
		templated := &policyv1.Policy{}
		terr := admin.Get(ctx, client.ObjectKey{Namespace: "cluster-1", Name: "rbac.templated"}, templated)
		if terr == nil {
			raw := string(templated.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
			if !strings.Contains(raw, `"plain":"from-configmap"`) || !strings.Contains(raw, `"secret":"$ocm_encrypted:`) {
				terr = fmt.Errorf("templated replica %s", raw)
			}
		}
		// The replica's rolloutStatus, patched on its status subresource.
		if rerr == nil && replica.Status.RolloutStatus != policyv1.RolloutProgressing {
			rerr = fmt.Errorf("replica rolloutStatus %q", replica.Status.RolloutStatus)
		}
		if rerr == nil && gerr == nil && terr == nil && len(root.Status.Status) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub running as its ServiceAccount did not propagate: replica %v, templated replica %v, root status %+v", rerr, terr, root.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}

	sa, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	// Hub templates read Secrets (fromSecret) and write only the clusters'
	// policy-encryption-key: no other Secret can be changed or deleted.
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "rbac"}}
	if err := admin.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	other.StringData = map[string]string{"k": "v"}
	if err := sa.Update(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("the hub's identity can update any Secret: %v", err)
	}
	if err := sa.Delete(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("the hub's identity can delete Secrets: %v", err)
	}
	pb := &policyv1.PlacementBinding{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "rbac", Name: "pb"}, pb); err != nil {
		t.Fatal(err)
	}
	pb.Subjects[0].Name = "other"
	if err := sa.Update(ctx, pb); !apierrors.IsForbidden(err) {
		t.Errorf("the hub's identity can change PlacementBindings: %v", err)
	}
	if err := sa.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "not-allowed"}}); !apierrors.IsForbidden(err) {
		t.Errorf("the hub's identity can create Namespaces: %v", fmt.Sprint(err))
	}
}

// startWithHubManifests starts an API server, stopped when the test ends, and
// applies manifests/hub to it as rendered by kustomize (without what a bare API
// server cannot take, see withoutClusterAddons).
func startWithHubManifests(t *testing.T) *localplane.Plane {
	t.Helper()
	plane, err := localplane.Start("hub")
	testkit.FatalOrSkip(t, "starting the hub API server", err)
	t.Cleanup(func() { _ = plane.Stop() })
	objs, err := localplane.ReadManifests("manifests/hub", bytes.NewReader(kustomizeBuild(t, "manifests/hub")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localplane.Apply(context.Background(), plane.Client, withoutClusterAddons(objs)); err != nil {
		t.Fatal(err)
	}
	return plane
}

// withoutClusterAddons drops what a bare API server cannot take or serve:
// cert-manager's kinds, and the placement webhook configuration (this test runs
// the hub without its webhook server; the placement tests install it).
func withoutClusterAddons(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasPrefix(o.GetAPIVersion(), "cert-manager.io/") || o.GetKind() == "MutatingWebhookConfiguration" {
			continue
		}
		out = append(out, o)
	}
	return out
}
