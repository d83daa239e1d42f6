package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

const (
	hubNamespace = "fleetpolicy-system"
	hubName      = "fleetpolicy-hub"
	spokeName    = "fleetpolicy-spoke"
	webhookHost  = "fleetpolicy-hub-webhook.fleetpolicy-system.svc"
	// cluster is the managed cluster the spoke pod is: the node itself.
	cluster = "cluster1"
	// apiServerFromPods is the node API server as pods reach it: the
	// Service kubernetes (kube-proxy), as in-cluster clients do.
	apiServerFromPods = "https://10.96.0.1:443"
)

// The deployed node, set by TestMain when FLEETPOLICY_E2E_NODE is set.
var (
	deployed  bool
	root      string
	nodeDir   string
	kubectl   string
	cfg       *rest.Config
	c         client.Client
	clientset kubernetes.Interface
	// webhookCA is the CA of the webhook's serving certificate.
	webhookCA []byte
)

func TestMain(m *testing.M) {
	nodeDir = os.Getenv("FLEETPOLICY_E2E_NODE")
	if nodeDir == "" {
		os.Exit(m.Run()) // every test skips
	}
	start := time.Now()
	if err := deploy(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: deploying on the node: %v\n", err)
		diagnose(os.Stderr)
		os.Exit(1)
	}
	fmt.Printf("e2e: deployed crds, hub and spoke in %s\n", time.Since(start).Round(time.Millisecond))
	deployed = true
	os.Exit(m.Run())
}

// need skips the test unless the node is deployed.
func need(t *testing.T) {
	t.Helper()
	if !deployed {
		t.Skip("no e2e node: FLEETPOLICY_E2E_NODE is unset (make e2e starts one and sets it)")
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			diagnose(&b)
			t.Log(b.String())
		}
	})
}

func deploy(ctx context.Context) error {
	var err error
	if root, err = localplane.RepoRoot(); err != nil {
		return err
	}
	kubectl = envOr("FLEETPOLICY_E2E_KUBECTL", filepath.Join(root, "bin", "kubectl"))
	kubeconfig := filepath.Join(nodeDir, "admin.kubeconfig")
	if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return err
	}
	if c, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}

	crds, err := kustomize("manifests/crds")
	if err != nil {
		return err
	}
	if err := apply(ctx, "manifests/crds", crds); err != nil {
		return err
	}
	// OCM's add-on and work APIs, and the add-on's hub side, before the hub
	// pods start: fleetpolicy-hub binds the add-on's hub role only when it
	// serves OCM's add-on API at its start (TestOCMAddOn).
	ocmCRDs, err := filepath.Glob(filepath.Join(root, ocmCoreCRDs, "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range ocmCRDs {
		objs, err := localplane.ReadManifestFile(f)
		if err != nil {
			return err
		}
		if _, err := localplane.Apply(ctx, c, objs); err != nil {
			return err
		}
	}
	if err := waitCRDs(ctx); err != nil {
		return err
	}
	addonOverlay, err := addonOverlay()
	if err != nil {
		return err
	}
	addon, err := kustomize(addonOverlay)
	if err != nil {
		return err
	}
	if err := apply(ctx, "manifests/addon", addon); err != nil {
		return err
	}

	hubOverlay, err := hubOverlay()
	if err != nil {
		return err
	}
	hub, err := kustomize(hubOverlay)
	if err != nil {
		return err
	}
	if err := apply(ctx, "manifests/hub (without cert-manager)", hub); err != nil {
		return err
	}

	if err := localplane.EnsureCluster(ctx, c, cluster); err != nil {
		return err
	}
	spokeOnHub, err := kustomize("manifests/spoke/hub") // namespace cluster1
	if err != nil {
		return err
	}
	if err := apply(ctx, "manifests/spoke/hub", spokeOnHub); err != nil {
		return err
	}
	if err := hubKubeconfigSecret(ctx); err != nil {
		return err
	}
	spokeOverlay, err := overlay("spoke", "manifests/spoke", spokeName, "")
	if err != nil {
		return err
	}
	spoke, err := kustomize(spokeOverlay)
	if err != nil {
		return err
	}
	if err := apply(ctx, "manifests/spoke", spoke); err != nil {
		return err
	}
	for _, d := range []struct {
		namespace, name string
		replicas        int32
	}{{hubNamespace, hubName, 2}, {hubNamespace, spokeName, 1}} {
		if err := waitAvailable(ctx, d.namespace, d.name, d.replicas, 3*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// kustomize renders dir (relative to the repository root, or absolute) with
// the repository's kustomize.
func kustomize(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	bin := envOr("FLEETPOLICY_E2E_KUSTOMIZE", filepath.Join(root, "bin", "kustomize"))
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, "build", dir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kustomize build %s: %v\n%s", dir, err, errOut.String())
	}
	return out.String(), nil
}

func apply(ctx context.Context, src, doc string) error {
	objs, err := localplane.ReadManifests(src, strings.NewReader(doc))
	if err != nil {
		return err
	}
	_, err = localplane.Apply(ctx, c, objs)
	return err
}

func waitCRDs(ctx context.Context) error {
	return poll(ctx, time.Minute, "CRDs established", func() string {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := c.List(ctx, list); err != nil {
			return err.Error()
		}
		for _, crd := range list.Items {
			established := false
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			if !established {
				return crd.Name + " not established"
			}
		}
		return ""
	})
}

// poll calls check until it returns "" or timeout passes.
func poll(ctx context.Context, timeout time.Duration, what string, check func() string) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = check(); last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: not after %s: %s", what, timeout, last)
}

// eventually is poll that fails the test.
func eventually(t *testing.T, timeout time.Duration, what string, check func() string) {
	t.Helper()
	if err := poll(t.Context(), timeout, what, check); err != nil {
		t.Fatal(err)
	}
}

func waitAvailable(ctx context.Context, namespace, name string, replicas int32, timeout time.Duration) error {
	return poll(ctx, timeout, "Deployment "+namespace+"/"+name+" available", func() string {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return err.Error()
		}
		s := d.Status
		if s.ObservedGeneration != d.Generation || s.UpdatedReplicas != replicas || s.AvailableReplicas != replicas || s.Replicas != replicas {
			return fmt.Sprintf("replicas %d, updated %d, available %d", s.Replicas, s.UpdatedReplicas, s.AvailableReplicas)
		}
		return ""
	})
}

// images is the kustomize images entry that gives component name the image
// of the archives, and the patch that keeps the node from pulling it.
func images(name string) string {
	return fmt.Sprintf(`images:
  - name: ghcr.io/fleetpolicy/%[1]s
    newName: %[2]s/%[1]s
    newTag: %[3]s
patches:
  - target: {kind: Deployment}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/imagePullPolicy
        value: Never
`, name, envOr("FLEETPOLICY_E2E_IMAGES", "ghcr.io/fleetpolicy"), envOr("FLEETPOLICY_E2E_IMAGE_TAG", "dev"))
}

// overlay writes a kustomization under the node's directory that renders
// base (relative to the repository root) with the archive's image of
// component, plus extra, and returns its directory.
func overlay(name, base, component, extra string) (string, error) {
	dir := filepath.Join(nodeDir, "overlays", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(dir, filepath.Join(root, base))
	if err != nil {
		return "", err
	}
	doc := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\n%s%s",
		filepath.ToSlash(rel), extra, images(component))
	return dir, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(doc), 0o644)
}

// hubOverlay is manifests/hub without cert-manager, as README "Webhook
// certificate without cert-manager" says: hack/webhook-cert.sh makes the
// certificate, the component manifests/hub/without-cert-manager drops
// cert-manager's objects and fills caBundle, and a secretGenerator makes the
// serving Secret.
func hubOverlay() (string, error) {
	dir := filepath.Join(nodeDir, "overlays", "hub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack", "webhook-cert.sh"), dir)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/webhook-cert.sh: %v\n%s", err, out.String())
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return "", err
	}
	webhookCA = ca
	component, err := filepath.Rel(dir, filepath.Join(root, "manifests/hub/without-cert-manager"))
	if err != nil {
		return "", err
	}
	_, err = overlay("hub", "manifests/hub", hubName, fmt.Sprintf(`components: [%s]
secretGenerator:
  - name: fleetpolicy-hub-webhook-cert
    namespace: fleetpolicy-system
    type: kubernetes.io/tls
    files: [tls.crt, tls.key, ca.crt]
    options: {disableNameSuffixHash: true}
`, filepath.ToSlash(component)))
	return dir, err
}

// ocmCoreCRDs are OCM's add-on and work CRDs (`make generate` copies them);
// manifests/crds has OCM's cluster ones.
const ocmCoreCRDs = "controllers/internal/localplane/testdata/ocm-core"

// addonOverlay is manifests/addon with the spoke image of the archives in its
// AddOnTemplate and imagePullPolicy Never on the template's Deployment (the
// index of which a JSON patch needs, read from manifests/addon itself).
func addonOverlay() (string, error) {
	base, err := kustomize("manifests/addon")
	if err != nil {
		return "", err
	}
	objs, err := localplane.ReadManifests("manifests/addon", strings.NewReader(base))
	if err != nil {
		return "", err
	}
	index := -1
	for _, o := range objs {
		if o.GetKind() != "AddOnTemplate" {
			continue
		}
		manifests, _, _ := unstructured.NestedSlice(o.Object, "spec", "agentSpec", "workload", "manifests")
		for i, m := range manifests {
			if obj, ok := m.(map[string]any); ok && obj["kind"] == "Deployment" && obj["metadata"].(map[string]any)["name"] == spokeName {
				index = i
			}
		}
	}
	if index < 0 {
		return "", errors.New("manifests/addon: no AddOnTemplate with the Deployment " + spokeName)
	}
	dir := filepath.Join(nodeDir, "overlays", "addon")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(dir, filepath.Join(root, "manifests/addon"))
	if err != nil {
		return "", err
	}
	doc := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [%s]
images:
  - name: ghcr.io/fleetpolicy/%[2]s
    newName: %[3]s/%[2]s
    newTag: %[4]s
patches:
  - target: {kind: AddOnTemplate, name: fleetpolicy}
    patch: |-
      - op: add
        path: /spec/agentSpec/workload/manifests/%[5]d/spec/template/spec/containers/0/imagePullPolicy
        value: Never
`, filepath.ToSlash(rel), spokeName, envOr("FLEETPOLICY_E2E_IMAGES", "ghcr.io/fleetpolicy"), envOr("FLEETPOLICY_E2E_IMAGE_TAG", "dev"), index)
	return dir, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(doc), 0o644)
}

// hubKubeconfigSecret writes the spoke's hub kubeconfig: a bound token of
// the ServiceAccount manifests/spoke/hub grants, the node API server as pods
// reach it, the node's CA.
func hubKubeconfigSecret(ctx context.Context) error {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: spokeName}}
	if err := c.SubResource("token").Create(ctx, sa, request); err != nil {
		return fmt.Errorf("token of %s/%s: %w", cluster, spokeName, err)
	}
	ca, err := os.ReadFile(filepath.Join(nodeDir, "pki", "ca.crt"))
	if err != nil {
		return err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: %q, certificate-authority-data: %q}
users:
- name: %s
  user: {token: %q}
contexts:
- name: hub
  context: {cluster: hub, user: %s}
current-context: hub
`, apiServerFromPods, b64(ca), cluster, request.Status.Token, cluster)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: "fleetpolicy-spoke-hub-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": []byte(kubeconfig)},
	}
	if err := localplane.EnsureNamespace(ctx, c, hubNamespace); err != nil {
		return err
	}
	err = c.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		err = c.Update(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("secret %s: %w", secret.Name, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// diagnose writes what the node runs: pods, recent events, the controllers'
// logs.
func diagnose(w interface{ Write([]byte) (int, error) }) {
	if kubectl == "" || nodeDir == "" {
		return
	}
	run := func(args ...string) {
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", filepath.Join(nodeDir, "admin.kubeconfig")}, args...)...)
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(w, "$ kubectl %s\n%s", strings.Join(args, " "), out)
		if err != nil && !errors.Is(err, exec.ErrNotFound) {
			fmt.Fprintf(w, "(%v)\n", err)
		}
	}
	run("get", "pods", "-A", "-o", "wide")
	run("get", "events", "-A", "--field-selector", "type=Warning", "--sort-by", ".lastTimestamp")
	for _, app := range []string{hubName, spokeName} {
		run("-n", hubNamespace, "logs", "-l", "app.kubernetes.io/name="+app, "--tail", "40", "--prefix", "--all-containers")
	}
}
