package addontest

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

const (
	addonName       = "fleetpolicy"
	agentNamespace  = "fleetpolicy-system"
	agentDeployment = "fleetpolicy-spoke"
	addonSecret     = "fleetpolicy-hub-kubeconfig"
	// signingDuration is every hub certificate's lifetime here: OCM renews one
	// when a fifth to a quarter of its life (with the signer's five minutes of
	// backdating) is left, so within a minute, and it expires two after.
	signingDuration = 2 * time.Minute
)

// fleet is an OCM hub with fleetpolicy's hub controller and two managed
// clusters that joined it through OCM registration.
type fleet struct {
	hub      *localplane.OCMHub
	hubC     client.Client
	clusters []*localplane.Klusterlet
	kubelets map[string]*fakeKubelet
}

func startFleet(t *testing.T) *fleet {
	t.Helper()
	ctx := context.Background()
	names := []string{"hub", "cluster1", "cluster2"}
	planes := make([]*localplane.Plane, len(names))
	err := localplane.Parallel(len(names), len(names), func(i int) error {
		opts := localplane.Options{CRDPaths: localplane.ManagedClusterCRDPaths}
		if i == 0 {
			opts.CRDPaths = localplane.OCMHubCRDPaths
			// The hub closes HTTP/2 connections now and then (as in front
			// of a load balancer), so that clients connect again with the
			// certificate they hold then: a TLS connection made before a
			// certificate expired would otherwise outlive it.
			opts.APIServerFlags = map[string]string{"goaway-chance": "0.02"}
		}
		p, err := localplane.StartWith(names[i], opts)
		planes[i] = p
		return err
	})
	for _, p := range planes {
		if p != nil {
			t.Cleanup(func() { _ = p.Stop() })
		}
	}
	testkit.FatalOrSkip(t, "starting the hub and managed API servers", err)
	ocm, err := localplane.StartOCMHub(ctx, planes[0], localplane.OCMHubOptions{SigningDuration: signingDuration})
	testkit.FatalOrSkip(t, "starting OCM's hub", err)
	hubC, err := client.New(planes[0].Config, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{hub: ocm, hubC: hubC, kubelets: map[string]*fakeKubelet{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("OCM's processes:\n%s", ocm.LogTails(25))
			for name, k := range f.kubelets {
				if p := k.process(); p != nil {
					t.Logf("--- %s spoke:\n%s", name, p.LogTail(25))
				}
			}
		}
		ocm.Stop()
	})
	for i, name := range names[1:] {
		k, err := ocm.Join(ctx, planes[i+1], name)
		if err != nil {
			t.Fatalf("%s joining the hub: %v", name, err)
		}
		f.clusters = append(f.clusters, k)
	}
	// fleetpolicy's hub runs as its ServiceAccount, with manifests/hub's RBAC
	// and what manifests/addon grants it.
	if err := localplane.EnsureNamespace(ctx, hubC, "fleetpolicy-system"); err != nil {
		t.Fatal(err)
	}
	testkit.ApplyFile(t, hubC, "manifests/hub/rbac.yaml")
	testkit.Apply(t, hubC, string(testkit.KustomizeBuild(t, "manifests/addon-fleetwide")))
	hubCfg := rest.CopyConfig(planes[0].Config)
	hubCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:fleetpolicy-system:fleetpolicy-hub"}
	hubtest.Start(t, hubCfg, func(o *hub.ManagerOptions) {
		o.LeaderElect, o.LeaderElectionNamespace = true, "fleetpolicy-system"
	})
	return f
}

func (f *fleet) cluster(name string) *localplane.Klusterlet {
	for _, k := range f.clusters {
		if k.ClusterName == name {
			return k
		}
	}
	panic("no cluster " + name)
}

// TestFleetpolicyAddOn installs manifests/addon (fleet-wide, by the
// Placement of manifests/addon-fleetwide) on a hub two clusters joined through
// OCM registration, and checks what the add-on issue promises: the add-on
// brings the CRDs, namespace, RBAC and Deployment to each cluster; OCM
// registration issues its hub credentials there, bound to the cluster's own
// namespace; the spoke, run as the Deployment describes with those
// credentials, brings a Policy to Compliant on the hub; health shows on the
// ManagedClusterAddOn; an AddOnDeploymentConfig reaches the Deployment; a new
// image rolls out to both clusters; disabling it on one cluster (by label,
// then a ManagedClusterAddOn of its own, then deleting that) removes the agent
// and its credentials and leaves every policy object and enforced object; the
// spoke keeps working across certificate rotations.
func TestFleetpolicyAddOn(t *testing.T) {
	f := startFleet(t)
	ctx := context.Background()

	for _, k := range f.clusters {
		waitAddOnAgent(t, f, k)
		f.kubelets[k.ClusterName] = startFakeKubelet(ctx, t, k.Plane, agentNamespace, agentDeployment)
	}
	for _, k := range f.clusters {
		waitAddOnAvailable(t, f, k.ClusterName)
	}

	t.Run("a Policy goes Compliant on the hub through the add-on", func(t *testing.T) {
		since := applyPolicy(t, f, "v1")
		waitCompliant(t, f, "v1", since)
	})
	t.Run("the add-on's hub identity reaches its own cluster namespace only", func(t *testing.T) {
		c := addonClient(t, f.cluster("cluster1"), f.hub.Plane)
		if err := c.List(ctx, &policyv1.PolicyList{}, client.InNamespace("cluster1")); err != nil {
			t.Errorf("the add-on of cluster1 cannot list its replicas: %v", err)
		}
		for _, probe := range []struct {
			what string
			err  error
		}{
			{"list cluster2's policies", c.List(ctx, &policyv1.PolicyList{}, client.InNamespace("cluster2"))},
			{"list root policies", c.List(ctx, &policyv1.PolicyList{}, client.InNamespace("policies"))},
			{"list cluster1's Secrets", c.List(ctx, &corev1.SecretList{}, client.InNamespace("cluster1"))},
			{"read ManagedCluster cluster2", c.Get(ctx, client.ObjectKey{Name: "cluster2"}, &clusterv1.ManagedCluster{})},
		} {
			if !apierrors.IsForbidden(probe.err) {
				t.Errorf("the add-on of cluster1 could %s (error %v), want Forbidden", probe.what, probe.err)
			}
		}
	})
	t.Run("an AddOnDeploymentConfig reaches the Deployment", func(t *testing.T) {
		testkit.Apply(t, f.hubC, `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: fleetpolicy, namespace: cluster1}
spec:
  # An AddOnDeploymentConfig moves an add-on to its agentInstallNamespace,
  # which OCM defaults to open-cluster-management-agent-addon; "" keeps the
  # AddOnTemplate's, fleetpolicy-system.
  agentInstallNamespace: ""
  customizedVariables:
    - {name: OPERATOR_POLICY_DEFAULT_NAMESPACE, value: operators}
  nodePlacement:
    nodeSelector: {node-role.kubernetes.io/infra: ""}
    tolerations: [{key: node-role.kubernetes.io/infra, operator: Exists, effect: NoSchedule}]
  registries:
    - {source: ghcr.io/fleetpolicy, mirror: registry.example.com/mirror}
  resourceRequirements:
    - containerID: "deployments:fleetpolicy-spoke:spoke"
      resources: {requests: {cpu: 50m, memory: 96Mi}, limits: {memory: 300Mi}}
  proxyConfig: {httpsProxy: "http://proxy.example.com:3128", noProxy: ".cluster.local"}
`)
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		testkit.Get(t, f.hubC, "cluster1", addonName, mca)
		mca.Spec.Configs = []addonv1alpha1.AddOnConfig{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupName, Resource: "addondeploymentconfigs"},
			ConfigReferent:      addonv1alpha1.ConfigReferent{Namespace: "cluster1", Name: "fleetpolicy"},
		}}
		if err := f.hubC.Update(ctx, mca); err != nil {
			t.Fatal(err)
		}
		managed := f.cluster("cluster1").Plane.Client
		testkit.Eventually(t, time.Minute, "the AddOnDeploymentConfig applied to cluster1's spoke Deployment", func() string {
			d := &appsv1.Deployment{}
			if err := managed.Get(ctx, client.ObjectKey{Namespace: agentNamespace, Name: agentDeployment}, d); err != nil {
				return err.Error()
			}
			spec := d.Spec.Template.Spec
			c := spec.Containers[0]
			var problems []string
			if !contains(c.Args, "--operator-policy-default-namespace=operators") {
				problems = append(problems, fmt.Sprintf("args %q", c.Args))
			}
			if _, ok := spec.NodeSelector["node-role.kubernetes.io/infra"]; !ok || len(spec.Tolerations) == 0 {
				problems = append(problems, fmt.Sprintf("nodeSelector %v tolerations %v", spec.NodeSelector, spec.Tolerations))
			}
			if !strings.HasPrefix(c.Image, "registry.example.com/mirror/fleetpolicy-spoke") {
				problems = append(problems, "image "+c.Image)
			}
			if limit := c.Resources.Limits[corev1.ResourceMemory]; limit.String() != "300Mi" {
				problems = append(problems, "memory limit "+limit.String())
			}
			if !hasEnv(c.Env, "HTTPS_PROXY", "http://proxy.example.com:3128") {
				problems = append(problems, fmt.Sprintf("env %v", c.Env))
			}
			return strings.Join(problems, "; ")
		})
		testkit.Eventually(t, time.Minute, "cluster1's spoke started again with its new Deployment", func() string {
			if n := f.kubelets["cluster1"].startCount(); n < 2 {
				return fmt.Sprintf("started %d times", n)
			}
			return ""
		})
		waitAddOnAvailable(t, f, "cluster1")
	})
	t.Run("a new image rolls out to every cluster of the placement", func(t *testing.T) {
		overlay := t.TempDir()
		base, err := filepath.Rel(overlay, filepath.Join(testkit.RepoRoot(t), "manifests/addon-fleetwide"))
		if err != nil {
			t.Fatal(err)
		}
		kustomization := "resources: [" + base + "]\nimages: [{name: ghcr.io/fleetpolicy/fleetpolicy-spoke, newTag: v0.2.0-test}]\n"
		if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(testkit.RepoRoot(t), overlay)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Apply(t, f.hubC, string(testkit.KustomizeBuild(t, rel)))
		for _, k := range f.clusters {
			testkit.Eventually(t, time.Minute, "the new image on "+k.ClusterName, func() string {
				d := &appsv1.Deployment{}
				if err := k.Plane.Client.Get(ctx, client.ObjectKey{Namespace: agentNamespace, Name: agentDeployment}, d); err != nil {
					return err.Error()
				}
				if image := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(image, "/fleetpolicy-spoke:v0.2.0-test") {
					return "image " + image
				}
				return ""
			})
			waitAddOnAvailable(t, f, k.ClusterName)
		}
		since := applyPolicy(t, f, "v2")
		waitCompliant(t, f, "v2", since)
	})
	t.Run("disabling the add-on on one cluster removes the agent and its credentials, nothing else", func(t *testing.T) {
		c2 := f.cluster("cluster2")
		oldCredentials := addonClient(t, c2, f.hub.Plane)
		mc := &clusterv1.ManagedCluster{}
		testkit.Get(t, f.hubC, "", "cluster2", mc)
		mc.Labels["fleetpolicy.io/addon"] = "disabled"
		if err := f.hubC.Update(ctx, mc); err != nil {
			t.Fatal(err)
		}
		waitAgentRemoved(t, f, c2, oldCredentials)
		waitAddOnAvailable(t, f, "cluster1")

		// With the add-on installed by hand (manifests/addon: the Manual
		// install strategy; OCM removes from a Placements strategy's add-on
		// any cluster its placements leave out), a ManagedClusterAddOn of its
		// own installs it on cluster2 again ...
		testkit.Apply(t, f.hubC, string(testkit.KustomizeBuild(t, "manifests/addon")))
		testkit.Apply(t, f.hubC, "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: ManagedClusterAddOn\nmetadata: {name: fleetpolicy, namespace: cluster2}\nspec: {}\n")
		waitAddOnAgent(t, f, c2)
		waitAddOnAvailable(t, f, "cluster2")
		since := applyPolicy(t, f, "v3")
		waitCompliant(t, f, "v3", since)
		// ... and deleting it uninstalls it; cluster1's, the Placement's
		// before, stays.
		newCredentials := addonClient(t, c2, f.hub.Plane)
		if err := f.hubC.Delete(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: addonName}}); err != nil {
			t.Fatal(err)
		}
		waitAgentRemoved(t, f, c2, newCredentials)
		waitAddOnAvailable(t, f, "cluster1")
	})
	t.Run("switching to OCM's policy agents and back keeps compliance and the enforced object", func(t *testing.T) {
		// cluster2 is without the add-on now, its policy objects kept. OCM's
		// own agents take over (with OCM's CRDs, as OCM's policy add-ons
		// install them, and the hub identity manifests/spoke/hub documents:
		// OCM's governance-policy-addon-controller, which would install them
		// as add-ons, is not on the Go module proxy), then fleetpolicy's
		// add-on again.
		c2 := f.cluster("cluster2")
		enforced := &corev1.ConfigMap{}
		testkit.Get(t, c2.Plane.Client, "default", "fleetpolicy-addon-test", enforced)
		for _, kind := range []string{"policies", "configurationpolicies", "operatorpolicies"} {
			testkit.ApplyFile(t, c2.Plane.Client, localplane.OCMPolicyCRDs+"/policy.open-cluster-management.io_"+kind+".yaml")
		}
		agents, err := localplane.StartOCMPolicyAgents(c2.Plane, "cluster2", handWiredHubKubeconfig(t, f, "cluster2"))
		if err != nil {
			t.Fatal(err)
		}
		defer agents.Stop()
		since := applyPolicy(t, f, "v5")
		waitCompliantOn(t, f, "v5", since, "cluster2")
		sameObject(t, c2, enforced)

		agents.Stop()
		testkit.Apply(t, f.hubC, "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: ManagedClusterAddOn\nmetadata: {name: fleetpolicy, namespace: cluster2}\nspec: {}\n")
		waitAddOnAgent(t, f, c2)
		waitAddOnAvailable(t, f, "cluster2")
		since = applyPolicy(t, f, "v6")
		waitCompliantOn(t, f, "v6", since, "cluster2")
		sameObject(t, c2, enforced)
	})
	t.Run("OperatorPolicies are evaluated once OLM is installed", func(t *testing.T) {
		// The clusters joined without OLM: the spoke runs without its
		// OperatorPolicy controller (the rest of these subtests), and starts
		// it when OLM's API appears.
		k := f.cluster("cluster1")
		files, err := localplane.ManifestFiles(filepath.Join(testkit.RepoRoot(t), "manifests/crds/olm"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			rel, err := filepath.Rel(testkit.RepoRoot(t), file)
			if err != nil {
				t.Fatal(err)
			}
			testkit.ApplyFile(t, k.Plane.Client, rel)
		}
		testkit.Apply(t, f.hubC, `
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: addon-operator, namespace: policies}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: everywhere}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: addon-operator}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: addon-operator, namespace: policies}
spec:
  remediationAction: inform
  disabled: false
  policy-templates:
    - objectDefinition:
        apiVersion: policy.open-cluster-management.io/v1beta1
        kind: OperatorPolicy
        metadata: {name: addon-operator}
        spec:
          remediationAction: inform
          severity: medium
          complianceType: musthave
          subscription: {name: example-operator, namespace: operators, channel: stable, source: example-catalog, sourceNamespace: olm}
`)
		testkit.Eventually(t, 2*time.Minute, "the OperatorPolicy evaluated on cluster1 and reported to the hub", func() string {
			replica := &policyv1.Policy{}
			if err := f.hubC.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "policies.addon-operator"}, replica); err != nil {
				return "replica: " + err.Error()
			}
			if replica.Status.ComplianceState != policyv1.NonCompliant {
				return fmt.Sprintf("replica %q, details %+v", replica.Status.ComplianceState, replica.Status.Details)
			}
			return ""
		})
	})
	t.Run("the spoke keeps working as OCM rotates its certificate", func(t *testing.T) {
		k := f.cluster("cluster1")
		kubelet := f.kubelets["cluster1"]
		starts := kubelet.startCount()
		// The spoke started before this with this certificate or an older one.
		firstCert := addonCertificate(t, k)
		testkit.Eventually(t, 2*signingDuration+time.Minute, "cluster1's add-on certificate to expire and be replaced", func() string {
			now := addonCertificate(t, k)
			if bytes.Equal(now.Raw, firstCert.Raw) {
				return "not rotated yet"
			}
			if time.Now().Before(firstCert.NotAfter.Add(5 * time.Second)) {
				return "the first certificate has not expired yet: " + firstCert.NotAfter.String()
			}
			return ""
		})
		if n, crashes := kubelet.startCount(), kubelet.crashCount(); n != starts || crashes != 0 {
			t.Errorf("cluster1's spoke was started %d times for a new Deployment while its certificate rotated (want none) and exited %d times by itself in the test (want none)", n-starts, crashes)
		}
		since := applyPolicy(t, f, "v4")
		waitCompliantOn(t, f, "v4", since, "cluster1")
	})
}

// waitAddOnAgent waits for the add-on on cluster k: its ManagedClusterAddOn on
// the hub, and on the cluster its CRDs (kept on removal), namespace, RBAC,
// Deployment and the hub kubeconfig OCM registration issued.
func waitAddOnAgent(t *testing.T, f *fleet, k *localplane.Klusterlet) {
	t.Helper()
	ctx := context.Background()
	managed := k.Plane.Client
	testkit.Eventually(t, 2*time.Minute, "the fleetpolicy add-on's agent on "+k.ClusterName, func() string {
		if err := f.hubC.Get(ctx, client.ObjectKey{Namespace: k.ClusterName, Name: addonName}, &addonv1alpha1.ManagedClusterAddOn{}); err != nil {
			return "ManagedClusterAddOn: " + err.Error()
		}
		for _, crd := range []string{"policies", "configurationpolicies", "operatorpolicies"} {
			obj := &apiextensionsv1.CustomResourceDefinition{}
			if err := managed.Get(ctx, client.ObjectKey{Name: crd + ".policy.open-cluster-management.io"}, obj); err != nil {
				return "CRD: " + err.Error()
			}
		}
		if err := managed.Get(ctx, client.ObjectKey{Name: "fleetpolicy-spoke"}, &rbacv1.ClusterRole{}); err != nil {
			return "ClusterRole: " + err.Error()
		}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: agentNamespace, Name: agentDeployment}, &appsv1.Deployment{}); err != nil {
			return "Deployment: " + err.Error()
		}
		secret := &corev1.Secret{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: agentNamespace, Name: addonSecret}, secret); err != nil {
			return "hub kubeconfig: " + err.Error()
		}
		if len(secret.Data["tls.crt"]) == 0 {
			return "hub kubeconfig: no certificate yet"
		}
		return ""
	})
}

// waitAddOnAvailable waits for the add-on's health on the hub.
func waitAddOnAvailable(t *testing.T, f *fleet, cluster string) {
	t.Helper()
	testkit.Eventually(t, 2*time.Minute, "ManagedClusterAddOn "+cluster+"/fleetpolicy Available", func() string {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := f.hubC.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: addonName}, mca); err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Sprintf("conditions %+v", mca.Status.Conditions)
		}
		return ""
	})
}

// waitAgentRemoved waits for the add-on to leave cluster k: no
// ManagedClusterAddOn, Deployment, agent namespace or RBAC there, the hub
// credentials it had (c) refused by the hub — and checks that the policy
// CRDs, the cluster's policies and what they enforced are all still there.
func waitAgentRemoved(t *testing.T, f *fleet, k *localplane.Klusterlet, c client.Client) {
	t.Helper()
	ctx := context.Background()
	managed := k.Plane.Client
	policiesBefore := &policyv1.PolicyList{}
	if err := managed.List(ctx, policiesBefore, client.InNamespace(k.ClusterName)); err != nil || len(policiesBefore.Items) == 0 {
		t.Fatalf("no replicated policy on %s before the removal (%v)", k.ClusterName, err)
	}
	enforced := &corev1.ConfigMap{}
	testkit.Get(t, managed, "default", "fleetpolicy-addon-test", enforced)
	testkit.Eventually(t, 2*time.Minute, "the add-on removed from "+k.ClusterName, func() string {
		var left []string
		for what, obj := range map[string]client.Object{
			"ManagedClusterAddOn": &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: k.ClusterName, Name: addonName}},
		} {
			if err := f.hubC.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
				left = append(left, what)
			}
		}
		for what, obj := range map[string]client.Object{
			"Deployment":  &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: agentNamespace, Name: agentDeployment}},
			"Namespace":   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNamespace}},
			"ClusterRole": &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleetpolicy-spoke"}},
		} {
			if err := managed.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
				left = append(left, what+" on the cluster")
			}
		}
		// Refused: forbidden once its binding is gone, or unauthorized once
		// its certificate expired (a certificate cannot be revoked).
		if err := c.List(ctx, &policyv1.PolicyList{}, client.InNamespace(k.ClusterName)); !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			left = append(left, fmt.Sprintf("the hub credentials (listing replicas: %v)", err))
		}
		return strings.Join(left, ", ")
	})
	for _, crd := range []string{"policies", "configurationpolicies", "operatorpolicies"} {
		testkit.Get(t, managed, "", crd+".policy.open-cluster-management.io", &apiextensionsv1.CustomResourceDefinition{})
	}
	policiesAfter := &policyv1.PolicyList{}
	if err := managed.List(ctx, policiesAfter, client.InNamespace(k.ClusterName)); err != nil || len(policiesAfter.Items) != len(policiesBefore.Items) {
		t.Errorf("%s had %d replicated policies before the removal and %d after (%v)", k.ClusterName, len(policiesBefore.Items), len(policiesAfter.Items), err)
	}
	sameObject(t, k, enforced)
}

// applyPolicy applies a Policy enforcing a ConfigMap whose data names
// version, bound to every cluster of the global set, and returns when (to the
// second, as compliance history counts).
func applyPolicy(t *testing.T, f *fleet, version string) time.Time {
	t.Helper()
	applied := time.Now().Truncate(time.Second)
	testkit.Apply(t, f.hubC, fmt.Sprintf(`
apiVersion: v1
kind: Namespace
metadata: {name: policies}
---
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: global, namespace: policies}
spec: {clusterSet: global}
---
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: everywhere, namespace: policies}
spec:
  clusterSets: [global]
  tolerations:
    - {key: cluster.open-cluster-management.io/unreachable, operator: Exists}
    - {key: cluster.open-cluster-management.io/unavailable, operator: Exists}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: addon-test, namespace: policies}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: everywhere}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: addon-test}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: addon-test, namespace: policies}
spec:
  remediationAction: enforce
  disabled: false
  policy-templates:
    - objectDefinition:
        apiVersion: policy.open-cluster-management.io/v1
        kind: ConfigurationPolicy
        metadata: {name: addon-test}
        spec:
          remediationAction: enforce
          object-templates:
            - complianceType: musthave
              objectDefinition:
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: fleetpolicy-addon-test, namespace: default}
                data: {version: %s}
`, version))
	return applied
}

// waitCompliant waits for every cluster where the add-on runs to enforce the
// ConfigMap at version and report the Policy Compliant to the hub after since.
func waitCompliant(t *testing.T, f *fleet, version string, since time.Time) {
	t.Helper()
	var clusters []string
	for _, k := range f.clusters {
		if f.kubelets[k.ClusterName].process() != nil {
			clusters = append(clusters, k.ClusterName)
		}
	}
	waitCompliantOn(t, f, version, since, clusters...)
}

func waitCompliantOn(t *testing.T, f *fleet, version string, since time.Time, clusters ...string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range clusters {
		k := f.cluster(name)
		testkit.Eventually(t, 2*time.Minute, "policy addon-test Compliant at "+version+" on "+name, func() string {
			cm := &corev1.ConfigMap{}
			if err := k.Plane.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "fleetpolicy-addon-test"}, cm); err != nil {
				return "ConfigMap: " + err.Error()
			}
			if cm.Data["version"] != version {
				return "ConfigMap at " + cm.Data["version"]
			}
			replica := &policyv1.Policy{}
			if err := f.hubC.Get(ctx, client.ObjectKey{Namespace: name, Name: "policies.addon-test"}, replica); err != nil {
				return "replica: " + err.Error()
			}
			if replica.Status.ComplianceState != policyv1.Compliant || !compliantSince(replica, since) {
				return fmt.Sprintf("replica %s, details %+v", replica.Status.ComplianceState, replica.Status.Details)
			}
			return ""
		})
	}
}

// compliantSince says whether every template of the replica has a newest
// compliance history entry that is Compliant and no older than since: the
// spoke wrote it to the hub after the Policy changed (the replica's status is
// the spoke's alone to write).
func compliantSince(replica *policyv1.Policy, since time.Time) bool {
	for _, d := range replica.Status.Details {
		if len(d.History) == 0 || !strings.HasPrefix(d.History[0].Message, "Compliant") || d.History[0].LastTimestamp.Time.Before(since) {
			return false
		}
	}
	return len(replica.Status.Details) > 0
}

// sameObject fails the test unless the enforced ConfigMap on cluster k is
// still the object it was (never deleted and created again).
func sameObject(t *testing.T, k *localplane.Klusterlet, was *corev1.ConfigMap) {
	t.Helper()
	now := &corev1.ConfigMap{}
	testkit.Get(t, k.Plane.Client, was.Namespace, was.Name, now)
	if now.UID != was.UID {
		t.Errorf("the enforced ConfigMap on %s was deleted and created again", k.ClusterName)
	}
}

// handWiredHubKubeconfig applies manifests/spoke/hub in cluster's namespace on
// the hub and writes a kubeconfig file with a token of its ServiceAccount.
func handWiredHubKubeconfig(t *testing.T, f *fleet, cluster string) string {
	t.Helper()
	ctx := context.Background()
	objs, err := localplane.ReadManifestFile(filepath.Join(testkit.RepoRoot(t), "manifests/spoke/hub/rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		o.SetNamespace(cluster)
	}
	testkit.ApplyObjects(t, f.hubC, objs...)
	token, err := localplane.ServiceAccountToken(ctx, f.hubC, cluster, "fleetpolicy-spoke")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := localplane.TokenKubeconfig(f.hub.Plane, "fleetpolicy-spoke", token)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hub-kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// addonClient is a client of the hub with the add-on credentials OCM
// registration wrote on cluster k (the Secret fleetpolicy-hub-kubeconfig).
func addonClient(t *testing.T, k *localplane.Klusterlet, hub *localplane.Plane) client.Client {
	t.Helper()
	secret := &corev1.Secret{}
	testkit.Get(t, k.Plane.Client, agentNamespace, addonSecret, secret)
	kubeconfig, err := clientcmd.Load(secret.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: hub.Config.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: hub.Config.CAData, CertData: secret.Data["tls.crt"], KeyData: secret.Data["tls.key"],
	}}
	for _, cluster := range kubeconfig.Clusters {
		if cluster.Server != hub.Config.Host {
			t.Errorf("the add-on's hub kubeconfig names server %s, want the hub %s", cluster.Server, hub.Config.Host)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// addonCertificate is the client certificate in cluster k's add-on Secret.
func addonCertificate(t *testing.T, k *localplane.Klusterlet) *x509.Certificate {
	t.Helper()
	secret := &corev1.Secret{}
	testkit.Get(t, k.Plane.Client, agentNamespace, addonSecret, secret)
	block, _ := pem.Decode(secret.Data["tls.crt"])
	if block == nil {
		t.Fatalf("the add-on Secret of %s holds no certificate", k.ClusterName)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// newScheme is fleetpolicy's scheme and OCM's add-on API.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := scheme.New()
	if err := addonv1alpha1.Install(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}
