package e2e

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

const (
	// addonCluster is the name the node joins its own OCM hub with, as OCM's
	// self-managed hub does: not cluster1, whose replicas the hand-wired
	// spoke synced.
	addonCluster = "local-cluster"
	addonName    = "fleetpolicy"
	// addonSecret is the add-on's hub kubeconfig, written by OCM's
	// registration agent, and addonMount where OCM's addon manager mounts it.
	addonSecret = "fleetpolicy-hub-kubeconfig"
	addonMount  = "/managed/hub-kubeconfig"
	// addonHubBinding is the RoleBinding fleetpolicy-hub makes in the
	// cluster's namespace (hub.AddonPermissions).
	addonHubBinding = "fleetpolicy-addon-hub"
)

// TestOCMAddOn runs OCM on the node, the hub managing itself: OCM's hub
// controllers (registration, addon manager, placement) and the klusterlet
// (registration and work agents) as processes on this machine next to the
// node's other components, the node's kube-controller-manager signing the
// CSRs with the node's CA. The node joins as local-cluster (bootstrap token,
// CSR, accepted); the hand-wired spoke Deployment is deleted, since the
// add-on brings one of the same name in the same namespace; the add-on,
// enabled on local-cluster by a ManagedClusterAddOn (manifests/addon was
// applied by TestMain before the hub pods started), comes through OCM's work
// agent as the spoke Deployment with the image of the archives. It checks
// that the spoke pod runs with the hub kubeconfig OCM registration issued
// (the Secret, a client certificate of the node's CA for the add-on's
// identity, mounted at /managed/hub-kubeconfig and read by the process);
// that the ManagedClusterAddOn becomes Available from the Deployment's
// status as the work agent reports it; and that a Policy bound to
// local-cluster is enforced by that pod and Compliant on the hub.
func TestOCMAddOn(t *testing.T) {
	need(t)
	ctx := t.Context()
	start := time.Now()

	// The add-on's Deployment is fleetpolicy-system/fleetpolicy-spoke, as the
	// hand-wired one: that one goes first, pods and all.
	hand := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: spokeName}}
	if err := c.Delete(ctx, hand, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the hand-wired spoke gone", func() string {
		err := c.Get(ctx, client.ObjectKeyFromObject(hand), &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("Deployment: %v", err)
		}
		list := &corev1.PodList{}
		if err := c.List(ctx, list, client.InNamespace(hubNamespace), client.MatchingLabels{"app.kubernetes.io/name": spokeName}); err != nil {
			return err.Error()
		}
		if len(list.Items) > 0 {
			return fmt.Sprintf("%d pods left", len(list.Items))
		}
		return ""
	})

	plane, err := localplane.Attach("node", filepath.Join(nodeDir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plane.Stop() })
	ocm, err := localplane.StartOCMHub(ctx, plane, localplane.OCMHubOptions{})
	if err != nil {
		t.Fatalf("starting OCM's hub controllers on the node: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("OCM's processes:\n%s", ocm.LogTails(30))
		}
		ocm.Stop()
	})
	if _, err := ocm.Join(ctx, plane, addonCluster); err != nil {
		t.Fatalf("the node joining its own hub as %s: %v", addonCluster, err)
	}
	t.Logf("OCM up and %s joined in %s", addonCluster, time.Since(start).Round(time.Millisecond))

	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: %s, namespace: %s}
spec: {}
`, addonName, addonCluster))
	if err := waitAvailable(ctx, hubNamespace, spokeName, 1, 3*time.Minute); err != nil {
		t.Fatalf("the add-on's spoke Deployment: %v", err)
	}
	t.Logf("the add-on's spoke Deployment available %s after start", time.Since(start).Round(time.Millisecond))

	t.Run("the spoke pod runs with the hub kubeconfig OCM registration issued", func(t *testing.T) {
		ps := pods(t, spokeName)
		if len(ps) != 1 || !ready(ps[0]) {
			t.Fatalf("%d spoke pods, want one Ready", len(ps))
		}
		p := ps[0]
		if !slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "ReplicaSet" }) {
			t.Errorf("pod %s is not a Deployment's: %v", p.Name, p.OwnerReferences)
		}
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: spokeName}, d); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(d.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "AppliedManifestWork" }) {
			t.Errorf("the spoke Deployment is not the work agent's (owners %v)", d.OwnerReferences)
		}
		ctr := p.Spec.Containers[0]
		wantImage := envOr("FLEETPOLICY_E2E_IMAGES", "ghcr.io/fleetpolicy") + "/" + spokeName + ":" + envOr("FLEETPOLICY_E2E_IMAGE_TAG", "dev")
		if ctr.Image != wantImage || ctr.ImagePullPolicy != corev1.PullNever {
			t.Errorf("image %s (pull %s), want %s (Never)", ctr.Image, ctr.ImagePullPolicy, wantImage)
		}
		for _, arg := range []string{"--hub-kubeconfig=" + addonMount + "/kubeconfig", "--cluster-name=" + addonCluster} {
			if !slices.Contains(ctr.Args, arg) {
				t.Errorf("args %q lack %s", ctr.Args, arg)
			}
		}
		volume := ""
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == addonSecret {
				volume = v.Name
			}
		}
		if volume == "" || !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == volume && m.MountPath == addonMount
		}) {
			t.Fatalf("Secret %s is not mounted at %s: volumes %v, mounts %v", addonSecret, addonMount, p.Spec.Volumes, ctr.VolumeMounts)
		}

		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: hubNamespace, Name: addonSecret}, secret); err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(secret.Data["tls.crt"])
		if block == nil {
			t.Fatalf("Secret %s holds no certificate (keys %v)", addonSecret, keys(secret.Data))
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		caPEM, err := os.ReadFile(filepath.Join(nodeDir, "pki", "ca.crt"))
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(caPEM)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("the add-on's certificate is not a client certificate of the node's CA: %v", err)
		}
		identity := "system:open-cluster-management:cluster:" + addonCluster + ":addon:" + addonName
		if !strings.HasPrefix(cert.Subject.CommonName, identity) {
			t.Errorf("the add-on's certificate is for %q, want %s:agent:...", cert.Subject.CommonName, identity)
		}
		t.Logf("hub identity %s, organizations %v, valid until %s", cert.Subject.CommonName, cert.Subject.Organization, cert.NotAfter.UTC().Format(time.RFC3339))
		// The fleetpolicy-hub pod bound the add-on's hub role to that
		// identity in local-cluster's namespace (it served OCM's add-on API
		// when it started).
		eventually(t, time.Minute, "RoleBinding "+addonCluster+"/"+addonHubBinding+" for "+cert.Subject.CommonName, func() string {
			rb := &rbacv1.RoleBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: addonCluster, Name: addonHubBinding}, rb); err != nil {
				return err.Error()
			}
			if rb.RoleRef.Name != hub.AddonHubClusterRole || !slices.ContainsFunc(rb.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.UserKind && s.Name == cert.Subject.CommonName
			}) {
				return fmt.Sprintf("role %s, subjects %v", rb.RoleRef.Name, rb.Subjects)
			}
			return ""
		})

		// What the container's process sees at the mount is that Secret.
		pid := process(t, p)
		for _, key := range []string{"kubeconfig", "tls.crt"} {
			seen, err := os.ReadFile(fmt.Sprintf("/proc/%d/root%s/%s", pid, addonMount, key))
			if err != nil {
				t.Fatalf("the spoke process's %s/%s: %v", addonMount, key, err)
			}
			if !bytes.Equal(seen, secret.Data[key]) {
				t.Errorf("the spoke process's %s/%s differs from Secret %s", addonMount, key, addonSecret)
			}
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(strings.Split(string(cmdline), "\x00"), "--hub-kubeconfig="+addonMount+"/kubeconfig") {
			t.Errorf("the spoke process runs %q", strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	})

	t.Run("the ManagedClusterAddOn is Available from the Deployment's status", func(t *testing.T) {
		eventually(t, 3*time.Minute, "ManagedClusterAddOn "+addonCluster+"/"+addonName+" Available", func() string {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: addonCluster, Name: addonName}, mca); err != nil {
				return err.Error()
			}
			if !meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
				return fmt.Sprintf("conditions %v", conditions(mca.Status.Conditions))
			}
			return ""
		})
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: addonCluster, Name: addonName}, mca); err != nil {
			t.Fatal(err)
		}
		t.Logf("ManagedClusterAddOn conditions: %v", conditions(mca.Status.Conditions))
		if mca.Status.HealthCheck.Mode != addonv1alpha1.HealthCheckModeCustomized {
			t.Errorf("health check mode %q, want Customized (OCM's workload prober)", mca.Status.HealthCheck.Mode)
		}
	})

	t.Run("a Policy bound to local-cluster is enforced by the add-on and Compliant on the hub", func(t *testing.T) {
		ns := "e2e-addon"
		took := enforceConfigMap(t, ns, "through-addon", addonCluster, "e2e-addon-enforced", "fleetpolicy-addon")
		t.Logf("Compliant on the hub %s after the Policy was applied", took.Round(time.Millisecond))
	})
	t.Logf("the add-on part took %s", time.Since(start).Round(time.Millisecond))
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func conditions(cs []metav1.Condition) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}
