package spoke_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// enforceOnSpoke applies on the hub and binds to the cluster a root policy
// ns/name that enforces one ConfigurationPolicy template, given as an indented
// YAML block (its lines start at column 6), after making the namespace dst of
// the managed cluster where its objects go.
func enforceOnSpoke(t *testing.T, ns, name, dst, configurationPolicy string) {
	t.Helper()
	if err := localplane.EnsureNamespace(context.Background(), spokeC, dst); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %s, namespace: %s}
spec:
  disabled: false
  remediationAction: enforce
  policy-templates:
  - objectDefinition:
%s`, name, ns, configurationPolicy))
	bindToCluster(t, ns, name)
}

// sourceConfigMap creates or updates a ConfigMap on the managed cluster.
func sourceConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := localplane.EnsureNamespace(ctx, spokeC, ns); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if !exists(t, spokeC, cm) {
			cm.Data = data
			return spokeC.Create(ctx, cm)
		}
		cm.Data = data
		return spokeC.Update(ctx, cm)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// configMapData waits until the ConfigMap ns/name on the managed cluster has
// data[key] == want.
func expectConfigMapValue(t *testing.T, ns, name, key, want string) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, fmt.Sprintf("ConfigMap %s/%s has %s=%q", ns, name, key, want), func() string {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if !exists(t, spokeC, cm) {
			return "it does not exist"
		}
		if cm.Data[key] != want {
			return fmt.Sprintf("%s is %q", key, cm.Data[key])
		}
		return ""
	})
}

// TestManagedTemplatesResolveAndFollowTheirSources enforces a policy whose
// object definitions read a ConfigMap of the managed cluster with
// fromConfigMap: a ConfigMap gets the value, and a Deployment's replicas (an
// integer in its schema) get it through toInt. The policy is evaluated by
// watch (evaluationInterval watch): when the source ConfigMap changes it is
// the dependency watch that resolves and enforces again.
func TestManagedTemplatesResolveAndFollowTheirSources(t *testing.T) {
	const ns, src, dst = "mtpl", "mtpl-src", "mtpl-dst"
	sourceConfigMap(t, src, "settings", map[string]string{"owner": "team-a", "replicas": "2"})
	enforceOnSpoke(t, ns, "m", dst, `
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: mtpl-cp}
      spec:
        remediationAction: inform
        evaluationInterval: {compliant: watch, noncompliant: watch}
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: made, namespace: mtpl-dst}
            data:
              owner: '{{ fromConfigMap "mtpl-src" "settings" "owner" }}'
        - complianceType: musthave
          objectDefinition:
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web, namespace: mtpl-dst}
            spec:
              replicas: '{{ fromConfigMap "mtpl-src" "settings" "replicas" | toInt }}'
              selector: {matchLabels: {app: web}}
              template:
                metadata: {labels: {app: web}}
                spec: {containers: [{name: web, image: nginx}]}
`)
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"m": policyv1.Compliant})
	expectConfigMapValue(t, dst, "made", "owner", "team-a")
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dst, Name: "web"}}
	if !exists(t, spokeC, web) || web.Spec.Replicas == nil || *web.Spec.Replicas != 2 {
		t.Fatalf("the Deployment's replicas are not the resolved 2: %+v", web.Spec.Replicas)
	}

	sourceConfigMap(t, src, "settings", map[string]string{"owner": "team-b", "replicas": "3"})
	expectConfigMapValue(t, dst, "made", "owner", "team-b")
	testkit.Eventually(t, 45*time.Second, "the Deployment follows the new replicas", func() string {
		web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: dst, Name: "web"}}
		if !exists(t, spokeC, web) || web.Spec.Replicas == nil || *web.Spec.Replicas != 3 {
			return fmt.Sprintf("replicas %v", web.Spec.Replicas)
		}
		return ""
	})
}

// TestObjectContextPerNamespace enforces a ConfigMap in every namespace a
// namespaceSelector picks, templated with .ObjectNamespace and .Object: each
// copy names its own namespace and keeps what its existing object held.
func TestObjectContextPerNamespace(t *testing.T) {
	const ns = "mctx"
	sourceConfigMap(t, "mctx-a", "info", map[string]string{"keep": "from-a"})
	enforceOnSpoke(t, ns, "c", "mctx-b", `
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: mctx-cp}
      spec:
        remediationAction: inform
        namespaceSelector: {include: ["mctx-*"]}
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: info}
            data:
              namespace: '{{ .ObjectNamespace }}'
              keep: '{{ dig "data" "keep" "none" .Object }}'
`)
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"c": policyv1.Compliant})
	expectConfigMapValue(t, "mctx-a", "info", "namespace", "mctx-a")
	expectConfigMapValue(t, "mctx-a", "info", "keep", "from-a")
	expectConfigMapValue(t, "mctx-b", "info", "namespace", "mctx-b")
	expectConfigMapValue(t, "mctx-b", "info", "keep", "none")
}

// TestObjectTemplatesRaw enforces a policy whose object-templates-raw builds
// one ConfigMap per name a ConfigMap of the managed cluster lists, with range.
func TestObjectTemplatesRaw(t *testing.T) {
	const ns, src, dst = "mraw", "mraw-src", "mraw-dst"
	sourceConfigMap(t, src, "teams", map[string]string{"names": "red green blue"})
	enforceOnSpoke(t, ns, "r", dst, `
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: mraw-cp}
      spec:
        remediationAction: inform
        object-templates-raw: |
          {{- range (splitList " " (fromConfigMap "mraw-src" "teams" "names")) }}
          - complianceType: musthave
            objectDefinition:
              apiVersion: v1
              kind: ConfigMap
              metadata:
                name: team-{{ . }}
                namespace: mraw-dst
              data:
                team: '{{ . }}'
          {{- end }}
`)
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"r": policyv1.Compliant})
	for _, team := range []string{"red", "green", "blue"} {
		expectConfigMapValue(t, dst, "team-"+team, "team", team)
	}
	if cp := spokeConfigPolicy(t, "mraw-cp"); cp == nil || len(cp.Status.CompliancyDetails) != 3 {
		t.Fatalf("the status does not have one entry per object template made: %+v", cp)
	}
}

// TestManagedTemplateErrorIsNonCompliant syncs an enforcing policy whose
// object definition calls fromConfigMap wrongly: it is NonCompliant with the
// library's message in the ConfigurationPolicy's status and the policy's
// compliance history, and nothing is created.
func TestManagedTemplateErrorIsNonCompliant(t *testing.T) {
	const ns, dst = "merr", "merr-dst"
	enforceOnSpoke(t, ns, "e", dst, `
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: merr-cp}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: never, namespace: merr-dst}
            data:
              owner: '{{ fromConfigMap "merr-dst" "settings" }}'
`)
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"e": policyv1.NonCompliant})
	const want = "wrong number of args for fromConfigMap"
	testkit.Eventually(t, 45*time.Second, "the error in the status and the history", func() string {
		cp := spokeConfigPolicy(t, "merr-cp")
		if cp == nil || len(cp.Status.CompliancyDetails) != 1 || len(cp.Status.CompliancyDetails[0].Conditions) != 1 ||
			!strings.Contains(cp.Status.CompliancyDetails[0].Conditions[0].Message, want) {
			return fmt.Sprintf("ConfigurationPolicy status %+v", cp)
		}
		if msg := newestMessage(spokePolicy(t, ns, "e"), 0); !strings.HasPrefix(msg, "NonCompliant; ") || !strings.Contains(msg, want) {
			return "newest history message " + msg
		}
		return ""
	})
	if never := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dst, Name: "never"}}); exists(t, spokeC, never) {
		t.Fatal("an object was created from a failed resolution")
	}
}

// TestHubTemplateErrorAnnotation syncs a policy template carrying the
// annotation OCM's propagator writes when a hub template fails: it is
// NonCompliant with that message, and neither the template nor its object is
// created.
func TestHubTemplateErrorAnnotation(t *testing.T) {
	const ns, dst = "mhub", "mhub-dst"
	enforceOnSpoke(t, ns, "h", dst, `
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata:
        name: mhub-cp
        annotations:
          policy.open-cluster-management.io/hub-templates-error: 'error calling lookup: the ConfigMap is missing'
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: never, namespace: mhub-dst}
`)
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"h": policyv1.NonCompliant})
	testkit.Eventually(t, 45*time.Second, "the hub's error in the history", func() string {
		if msg := newestMessage(spokePolicy(t, ns, "h"), 0); msg != "template-error; error calling lookup: the ConfigMap is missing" {
			return "newest history message " + msg
		}
		return ""
	})
	if spokeConfigPolicy(t, "mhub-cp") != nil {
		t.Error("the template with a hub template error was created")
	}
	if never := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dst, Name: "never"}}); exists(t, spokeC, never) {
		t.Error("an object of the template with a hub template error was created")
	}
}

// hubEncryptionKey returns the AES key of the cluster namespace on the hub,
// making the key Secret when there is none.
func hubEncryptionKey(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: templates.EncryptionKeySecret}}
	if !exists(t, hubC, secret) {
		// Rotated just now, so that the hub's key rotation leaves it alone.
		secret.Annotations = map[string]string{templates.LastRotatedAnnotation: time.Now().Format(time.RFC3339)}
		secret.Data = map[string][]byte{templates.KeyData: []byte(strings.Repeat("K", templates.KeySize))}
		if err := hubC.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if !exists(t, hubC, secret) {
			t.Fatal("the key Secret is gone")
		}
	}
	return secret.Data[templates.KeyData]
}

// TestDecryptsHubEncryptedValues checks that the spoke copies the hub's
// encryption key Secret of the cluster namespace and, with it and the
// template's IV annotation, decrypts a value encrypted with the library's
// protect: the object created has the plain text. With the wrong IV the
// policy is NonCompliant with the decryption error and creates nothing.
func TestDecryptsHubEncryptedValues(t *testing.T) {
	const ns, dst = "menc", "menc-dst"
	key := hubEncryptionKey(t)
	iv := []byte("0123456789abcdef")
	protector, err := gotemplates.NewResolverWithClients(nil, nil, gotemplates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := protector.ResolveTemplate([]byte(`{"v":"{{ \"hunter2\" | protect }}"}`), nil, &gotemplates.ResolveOptions{
		EncryptionConfig: gotemplates.EncryptionConfig{EncryptionEnabled: true, AESKey: key, InitializationVector: iv},
	})
	if err != nil {
		t.Fatal(err)
	}
	var protected struct{ V string }
	if err := json.Unmarshal(res.ResolvedJSON, &protected); err != nil || !strings.HasPrefix(protected.V, "$ocm_encrypted:") {
		t.Fatalf("protect made %q (%v)", protected.V, err)
	}
	// A ConfigurationPolicy with the IV annotation and a ConfigMap holding value.
	encrypted := func(name string, iv []byte, configMap string) string {
		return fmt.Sprintf(`
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata:
        name: %s
        annotations:
          %s: %s
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: %s, namespace: %s}
            data:
              password: '%s'
`, name, templates.IVAnnotation, base64.StdEncoding.EncodeToString(iv), configMap, dst, protected.V)
	}
	enforceOnSpoke(t, ns, "d", dst, encrypted("menc-cp", iv, "secretive"))
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"d": policyv1.Compliant})
	expectConfigMapValue(t, dst, "secretive", "password", "hunter2")

	copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: templates.EncryptionKeySecret}}
	if !exists(t, spokeC, copied) || string(copied.Data[templates.KeyData]) != string(key) {
		t.Fatalf("the spoke's copy of the key Secret does not hold the hub's key: %v", copied.Data)
	}

	// The same value with an IV it was not encrypted with cannot be
	// decrypted: NonCompliant with the library's error, nothing created.
	enforceOnSpoke(t, ns, "wrong-iv", dst, encrypted("menc-wrong-iv", []byte("fedcba9876543210"), "undecrypted"))
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"wrong-iv": policyv1.NonCompliant})
	testkit.Eventually(t, 45*time.Second, "the decryption error in the history", func() string {
		if msg := newestMessage(spokePolicy(t, ns, "wrong-iv"), 0); !strings.HasPrefix(msg, "NonCompliant; ") || !strings.Contains(msg, "padding") {
			return "newest history message " + msg
		}
		return ""
	})
	if undecrypted := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dst, Name: "undecrypted"}}); exists(t, spokeC, undecrypted) {
		t.Error("an object was created from a value that could not be decrypted")
	}
}

// TestEncryptionKeyCopyFollowsTheHub rotates the hub's key Secret of the
// cluster namespace (the new key, the old one as previousKey): the spoke's
// copy follows.
func TestEncryptionKeyCopyFollowsTheHub(t *testing.T) {
	ctx := context.Background()
	key := hubEncryptionKey(t)
	rotated := []byte(strings.Repeat("R", templates.KeySize))
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: templates.EncryptionKeySecret}}
		if !exists(t, hubC, secret) {
			t.Fatal("the hub's key Secret is gone")
		}
		secret.Data = map[string][]byte{templates.KeyData: rotated, templates.PreviousKeyData: key}
		return hubC.Update(ctx, secret)
	})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "the copy holds the rotated keys", func() string {
		copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: templates.EncryptionKeySecret}}
		if !exists(t, spokeC, copied) {
			return "no copy"
		}
		if string(copied.Data[templates.KeyData]) != string(rotated) || string(copied.Data[templates.PreviousKeyData]) != string(key) {
			return fmt.Sprintf("copy data %v", copied.Data)
		}
		return ""
	})
}

// TestManagedTemplatesBounded: managed-cluster templates that would loop for
// hours stop at their bound and are NonCompliant naming it, while another
// policy on the cluster is still enforced (issue 29: nine looping templates
// used to starve every other ConfigurationPolicy).
func TestManagedTemplatesBounded(t *testing.T) {
	policy := func(name, dst, value string) string {
		return fmt.Sprintf(`
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %s}
      spec:
        remediationAction: enforce
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: out, namespace: %s}
            data:
              value: '%s'
`, name, dst, value)
	}
	const loop = `{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`
	for i := range 9 { // a namespace each: bindToCluster binds one policy per namespace
		enforceOnSpoke(t, fmt.Sprintf("mloop-%d", i), "l", "mloop-dst", policy(fmt.Sprintf("mloop-l%d", i), "mloop-dst", loop))
	}
	enforceOnSpoke(t, "mloop-ok", "ok", "mloop-ok-dst", policy("mloop-ok", "mloop-ok-dst", `{{ "resolved" | upper }}`))
	expectConfigMapValue(t, "mloop-ok-dst", "out", "value", "RESOLVED")
	for i := range 9 {
		expectCompliance(t, fmt.Sprintf("mloop-%d", i), map[string]policyv1.ComplianceState{"l": policyv1.NonCompliant})
	}
	testkit.Eventually(t, 45*time.Second, "the bound in the status", func() string {
		cp := spokeConfigPolicy(t, "mloop-l0")
		if cp == nil || len(cp.Status.CompliancyDetails) != 1 || len(cp.Status.CompliancyDetails[0].Conditions) != 1 ||
			!strings.Contains(cp.Status.CompliancyDetails[0].Conditions[0].Message, "time bound of 3s (set by --template-timeout)") {
			return fmt.Sprintf("ConfigurationPolicy status %+v", cp)
		}
		return ""
	})
}
