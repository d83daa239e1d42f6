package manifesttest

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
)

// TestHubWithoutCertManager renders manifests/hub with the component
// manifests/hub/without-cert-manager and a Secret generated from files, as
// README "Webhook certificate without cert-manager" says: no cert-manager
// object or annotation is left, and the webhook's caBundle is the Secret's
// ca.crt. `make e2e` deploys it and calls the webhook through it.
func TestHubWithoutCertManager(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kustomize")
	}
	root := testkit.RepoRoot(t)
	dir := t.TempDir()
	ca := "-----BEGIN CERTIFICATE-----\nnot checked by kustomize\n-----END CERTIFICATE-----\n"
	for name, data := range map[string]string{"tls.crt": "cert\n", "tls.key": "key\n", "ca.crt": ca} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	kustomization := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [` + rel("manifests/hub") + `]
components: [` + rel("manifests/hub/without-cert-manager") + `]
secretGenerator:
  - name: fleetpolicy-hub-webhook-cert
    namespace: fleetpolicy-system
    type: kubernetes.io/tls
    files: [tls.crt, tls.key, ca.crt]
    options: {disableNameSuffixHash: true}
`
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "bin", "kustomize"), "build", dir)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr.String())
	}
	objs, err := localplane.ReadManifests("hub without cert-manager", &out)
	if err != nil {
		t.Fatal(err)
	}
	secrets, webhooks := 0, 0
	for _, o := range objs {
		if strings.HasPrefix(o.GetAPIVersion(), "cert-manager.io/") {
			t.Errorf("%s %s is still rendered", o.GetKind(), o.GetName())
		}
		for k := range o.GetAnnotations() {
			if strings.HasPrefix(k, "cert-manager.io/") {
				t.Errorf("%s %s still has the annotation %s", o.GetKind(), o.GetName(), k)
			}
		}
		switch o.GetKind() {
		case "Secret":
			if o.GetName() == "fleetpolicy-hub-webhook-cert" && o.GetNamespace() == "fleetpolicy-system" {
				secrets++
			}
		case "MutatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for _, h := range hooks {
				// The Secret's data, base64 that kustomize wraps at 76
				// characters; the API server's decoder skips the newlines.
				bundle, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
				if decoded, err := base64.StdEncoding.DecodeString(bundle); err != nil || string(decoded) != ca {
					t.Errorf("webhook caBundle %q (%v), want ca.crt of the Secret", bundle, err)
				}
				webhooks++
			}
		}
	}
	if secrets != 1 || webhooks == 0 {
		t.Errorf("rendered %d serving Secrets and %d webhooks, want 1 and at least 1", secrets, webhooks)
	}
}
