package hub_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// The clusters of the hub template tests, with labels of their own.
var tplClusters = map[string]map[string]string{"tpl-1": {"env": "prod"}, "tpl-2": {"env": "dev"}}

func ensureTemplateClusters(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for name, labels := range tplClusters {
		if err := localplane.EnsureCluster(ctx, c, name); err != nil {
			t.Fatal(err)
		}
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			t.Fatal(err)
		}
		if mc.Labels["env"] != labels["env"] {
			mc.Labels = map[string]string{"env": labels["env"]}
			if err := c.Update(ctx, mc); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// templatedPolicyYAML is a root policy (with extra metadata and spec lines)
// whose ConfigurationPolicy wants a ConfigMap with data.value = value, bound
// to the given clusters.
func templatedPolicyYAML(ns, name, metadata, spec, value string, clusters ...string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: %[2]s
  namespace: %[1]s%[3]s
spec:
  disabled: false
  remediationAction: inform%[4]s
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %[2]s-cp}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: out, namespace: default}
            data:
              value: '%[5]s'
`, ns, name, metadata, spec, value) + "\n---" + ruleYAML(ns, name, clusters...) + "\n---" + bindingYAML(ns, name, name, name, "")
}

// replicaValue returns the templated value of root's replica for cluster, its
// annotations and its template's annotations ("" and nil when absent).
func replicaValue(t *testing.T, ns, name, cluster string) (value string, annotations, templateAnnotations map[string]string) {
	t.Helper()
	p := &policyv1.Policy{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: replication.Name(ns, name)}, p)
	if apierrors.IsNotFound(err) {
		return "", nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw); err != nil {
		t.Fatal(err)
	}
	objects, _, _ := unstructured.NestedSlice(u.Object, "spec", "object-templates")
	value, _, _ = unstructured.NestedString(objects[0].(map[string]any), "objectDefinition", "data", "value")
	return value, p.Annotations, u.GetAnnotations()
}

func expectValues(t *testing.T, ns, name string, want map[string]string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("replica values of %s/%s", ns, name), func() string {
		for cluster, w := range want {
			if got, _, _ := replicaValue(t, ns, name, cluster); got != w {
				root := &policyv1.Policy{}
				_ = c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, root)
				return fmt.Sprintf("%s: %q, want %q (root conditions %+v)", cluster, got, w, root.Status.Conditions)
			}
		}
		return ""
	})
}

// expectTemplatesCondition waits for the root's HubTemplatesResolved condition
// to have status and a message containing every part.
func expectTemplatesCondition(t *testing.T, ns, name string, status metav1.ConditionStatus, parts ...string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, "the HubTemplatesResolved condition of "+ns+"/"+name, func() string {
		cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, name).Conditions, hub.ConditionHubTemplatesResolved)
		if cond == nil || cond.Status != status {
			return fmt.Sprintf("condition %+v, want status %s", cond, status)
		}
		for _, p := range parts {
			if !strings.Contains(cond.Message, p) {
				return fmt.Sprintf("message %q lacks %q", cond.Message, p)
			}
		}
		return ""
	})
}

// expectEvent waits for a Warning PolicyPropagation Event on the root whose
// note contains every part.
func expectEvent(t *testing.T, ns, name string, parts ...string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, "a PolicyPropagation Event on "+ns+"/"+name, func() string {
		list := &eventsv1.EventList{}
		if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
	events:
		for _, e := range list.Items {
			if e.Regarding.Name != name || e.Reason != "PolicyPropagation" || e.Type != corev1.EventTypeWarning {
				continue
			}
			for _, p := range parts {
				if !strings.Contains(e.Note, p) {
					continue events
				}
			}
			return ""
		}
		return fmt.Sprintf("none among %d Events", len(list.Items))
	})
}

func setConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	cm.Data = data
	switch {
	case apierrors.IsNotFound(err):
		err = c.Create(ctx, cm)
	case err == nil:
		err = c.Update(ctx, cm)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestHubTemplatesPerCluster: each cluster's replica gets its own
// .ManagedClusterName, ConfigMap entry and .ManagedClusterLabels; a change of a
// ConfigMap one cluster's templates read resolves that replica again and no
// other; a label change reaches the replica.
func TestHubTemplatesPerCluster(t *testing.T) {
	ensureTemplateClusters(t)
	const ns = "hubtpl-basic"
	if err := localplane.EnsureNamespace(context.Background(), c, ns); err != nil {
		t.Fatal(err)
	}
	setConfigMap(t, ns, "site-tpl-1", map[string]string{"site": "site-1"})
	setConfigMap(t, ns, "site-tpl-2", map[string]string{"site": "site-2"})
	value := `{{hub .ManagedClusterName hub}}/{{hub fromConfigMap "hubtpl-basic" (printf "site-%s" .ManagedClusterName) "site" hub}}/{{hub index .ManagedClusterLabels "env" hub}}`
	testkit.Apply(t, c, templatedPolicyYAML(ns, "p", "", "", value, "tpl-1", "tpl-2"))
	expectValues(t, ns, "p", map[string]string{"tpl-1": "tpl-1/site-1/prod", "tpl-2": "tpl-2/site-2/dev"})
	expectTemplatesCondition(t, ns, "p", metav1.ConditionTrue)

	t.Run("a ConfigMap change resolves only the replica that read it", func(t *testing.T) {
		other := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "tpl-2", Name: replication.Name(ns, "p")}}
		get(t, other)
		resolutions := hub.HubTemplateResolutionsTotal()
		setConfigMap(t, ns, "site-tpl-1", map[string]string{"site": "site-1b"})
		expectValues(t, ns, "p", map[string]string{"tpl-1": "tpl-1/site-1b/prod", "tpl-2": "tpl-2/site-2/dev"})
		time.Sleep(500 * time.Millisecond) // room for a wrong second resolution
		if got := hub.HubTemplateResolutionsTotal() - resolutions; got != 1 {
			t.Errorf("%v replicas resolved again, want 1", got)
		}
		after := &policyv1.Policy{ObjectMeta: other.ObjectMeta}
		get(t, after)
		if after.ResourceVersion != other.ResourceVersion {
			t.Error("the other cluster's replica was written")
		}
	})
	t.Run("a ManagedCluster label change reaches .ManagedClusterLabels", func(t *testing.T) {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "tpl-2"}}
		get(t, mc)
		mc.Labels["env"] = "staging"
		if err := c.Update(context.Background(), mc); err != nil {
			t.Fatal(err)
		}
		defer ensureTemplateClusters(t)
		expectValues(t, ns, "p", map[string]string{"tpl-1": "tpl-1/site-1b/prod", "tpl-2": "tpl-2/site-2/staging"})
	})
	t.Run("a status report reconciles the root without resolving again", func(t *testing.T) {
		// The label restored after the previous step has reached the replica.
		expectValues(t, ns, "p", map[string]string{"tpl-1": "tpl-1/site-1b/prod", "tpl-2": "tpl-2/site-2/dev"})
		resolutions := hub.HubTemplateResolutionsTotal()
		replica := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "tpl-1", Name: replication.Name(ns, "p")}}
		get(t, replica)
		replica.Status.ComplianceState = policyv1.Compliant
		if err := c.Status().Update(context.Background(), replica); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "the root's status from the report", func() string {
			for _, e := range testkit.RootStatus(t, c, ns, "p").Status {
				if e.ClusterName == "tpl-1" && e.ComplianceState == policyv1.Compliant {
					return ""
				}
			}
			return "tpl-1 not Compliant in the root's status"
		})
		if got := hub.HubTemplateResolutionsTotal() - resolutions; got != 0 {
			t.Errorf("%v replicas resolved again for a status report", got)
		}
	})
	t.Run("the hub settles: no write without a change", func(t *testing.T) {
		time.Sleep(time.Second)
		writes := hub.ReplicaWritesTotal()
		time.Sleep(time.Second)
		if got := hub.ReplicaWritesTotal() - writes; got != 0 {
			t.Errorf("%v replica writes without a change", got)
		}
	})
}

// TestHubTemplatesAccessRule: without hubTemplateOptions.serviceAccountName a
// template may read only the root's namespace; with it, what the
// ServiceAccount may read; a missing ServiceAccount is reported and, once
// created, used.
func TestHubTemplatesAccessRule(t *testing.T) {
	ensureTemplateClusters(t)
	ctx := context.Background()
	const ns, elsewhere = "hubtpl-access", "hubtpl-elsewhere"
	for _, n := range []string{ns, elsewhere} {
		if err := localplane.EnsureNamespace(ctx, c, n); err != nil {
			t.Fatal(err)
		}
	}
	setConfigMap(t, elsewhere, "shared", map[string]string{"k": "from-elsewhere"})
	for _, name := range []string{"reader", "nobody"} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	grantConfigMapReader(t, elsewhere, ns, "reader")
	value := `{{hub fromConfigMap "hubtpl-elsewhere" "shared" "k" hub}}`
	withSA := func(sa string) string { return "\n  hubTemplateOptions: {serviceAccountName: " + sa + "}" }
	testkit.Apply(t, c, templatedPolicyYAML(ns, "hub-identity", "", "", value, "tpl-1"))
	testkit.Apply(t, c, templatedPolicyYAML(ns, "granted", "", withSA("reader"), value, "tpl-1"))
	testkit.Apply(t, c, templatedPolicyYAML(ns, "not-granted", "", withSA("nobody"), value, "tpl-1"))
	testkit.Apply(t, c, templatedPolicyYAML(ns, "missing-sa", "", withSA("later"), value, "tpl-1"))

	expectValues(t, ns, "granted", map[string]string{"tpl-1": "from-elsewhere"})
	expectTemplatesCondition(t, ns, "granted", metav1.ConditionTrue)
	expectTemplatesCondition(t, ns, "hub-identity", metav1.ConditionFalse, "tpl-1", "restricted to hubtpl-access")
	expectEvent(t, ns, "hub-identity", "cluster tpl-1", "restricted to hubtpl-access")
	expectTemplatesCondition(t, ns, "not-granted", metav1.ConditionFalse, "tpl-1", "forbidden", "system:serviceaccount:hubtpl-access:nobody")
	expectTemplatesCondition(t, ns, "missing-sa", metav1.ConditionFalse, "tpl-1", "hubtpl-access/later", "does not exist")
	for _, name := range []string{"hub-identity", "not-granted", "missing-sa"} {
		if v, _, _ := replicaValue(t, ns, name, "tpl-1"); v != "" {
			t.Errorf("%s: a replica was written with %q", name, v)
		}
	}

	t.Run("a missing ServiceAccount that appears is used", func(t *testing.T) {
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}}); err != nil {
			t.Fatal(err)
		}
		grantConfigMapReader(t, elsewhere, ns, "later")
		expectValues(t, ns, "missing-sa", map[string]string{"tpl-1": "from-elsewhere"})
		expectTemplatesCondition(t, ns, "missing-sa", metav1.ConditionTrue)
	})
}

// grantConfigMapReader lets ServiceAccount saNS/sa read ConfigMaps in ns.
func grantConfigMapReader(t *testing.T, ns, saNS, sa string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmap-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmap-reader-" + sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmap-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: saNS, Name: sa}}}
	if err := c.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestHubTemplatesEncryption: fromSecret reaches the replica only encrypted,
// with the IV on the replica and its template, the cluster's key Secret is
// created, the spoke's decryption gives the Secret's value back, and
// trigger-update resolves again without reaching the replica. A rotation of
// the key (due after 30 days) re-encrypts the replica with the new key.
func TestHubTemplatesEncryption(t *testing.T) {
	ensureTemplateClusters(t)
	ctx := context.Background()
	const ns = "hubtpl-secret"
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "s3cret"}}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testkit.Apply(t, c, templatedPolicyYAML(ns, "p", "", "", `{{hub fromSecret "hubtpl-secret" "creds" "password" hub}}`, "tpl-1"))

	var value, iv string
	testkit.Eventually(t, 20*time.Second, "an encrypted replica", func() string {
		v, annotations, tmplAnnotations := replicaValue(t, ns, "p", "tpl-1")
		if !strings.HasPrefix(v, "$ocm_encrypted:") {
			return fmt.Sprintf("value %q", v)
		}
		iv = annotations[templates.IVAnnotation]
		if iv == "" || tmplAnnotations[templates.IVAnnotation] != iv {
			return fmt.Sprintf("IV %q on the replica, %q on its template", iv, tmplAnnotations[templates.IVAnnotation])
		}
		value = v
		return ""
	})
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tpl-1", Name: templates.EncryptionKeySecret}}
	get(t, key)
	if len(key.Data["key"]) != templates.KeySize || key.Labels[templates.BackupLabel] != "policy" ||
		key.Annotations[templates.LastRotatedAnnotation] == "" {
		t.Fatalf("key Secret %+v with a %d-byte key", key.ObjectMeta, len(key.Data["key"]))
	}
	if got := decrypt(t, value, key.Data["key"], iv); got != base64.StdEncoding.EncodeToString([]byte("s3cret")) {
		t.Errorf("decrypted %q", got)
	}

	t.Run("trigger-update resolves again and is not copied", func(t *testing.T) {
		resolutions := hub.HubTemplateResolutionsTotal()
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
		patch := client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"annotations":{"`+templates.TriggerUpdateAnnotation+`":"now"}}}`))
		if err := c.Patch(ctx, root, patch); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "a resolution", func() string {
			if hub.HubTemplateResolutionsTotal() == resolutions {
				return "none"
			}
			return ""
		})
		v, annotations, _ := replicaValue(t, ns, "p", "tpl-1")
		if _, ok := annotations[templates.TriggerUpdateAnnotation]; ok {
			t.Error("trigger-update reached the replica")
		}
		if v != value || annotations[templates.IVAnnotation] != iv {
			t.Errorf("the IV or value changed: %q %q", v, annotations[templates.IVAnnotation])
		}
	})
	t.Run("a due rotation re-encrypts with the new key", func(t *testing.T) {
		get(t, key)
		old := key.Data["key"]
		key.Annotations[templates.LastRotatedAnnotation] = time.Now().Add(-31 * 24 * time.Hour).UTC().Format(time.RFC3339)
		if err := c.Update(ctx, key); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "a rotated key and a re-encrypted replica", func() string {
			get(t, key)
			if string(key.Data["previousKey"]) != string(old) || string(key.Data["key"]) == string(old) {
				return "not rotated"
			}
			v, annotations, _ := replicaValue(t, ns, "p", "tpl-1")
			if v == value {
				return "the replica keeps the value encrypted with the old key"
			}
			if got := decrypt(t, v, key.Data["key"], annotations[templates.IVAnnotation]); got != base64.StdEncoding.EncodeToString([]byte("s3cret")) {
				return fmt.Sprintf("decrypted with the new key: %q", got)
			}
			return ""
		})
	})
}

// decrypt is what a spoke does with an encrypted value: the library's
// decryption with the cluster's key and the replica's IV.
func decrypt(t *testing.T, value string, key []byte, iv string) string {
	t.Helper()
	rawIV, err := base64.StdEncoding.DecodeString(iv)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gotemplates.NewResolver(plane.Config, gotemplates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.ResolveTemplate([]byte(`{"v":"`+value+`"}`), nil, &gotemplates.ResolveOptions{
		EncryptionConfig: gotemplates.EncryptionConfig{DecryptionEnabled: true, AESKey: key, InitializationVector: rawIV}})
	if err != nil {
		return err.Error()
	}
	var out struct{ V string }
	if err := json.Unmarshal(res.ResolvedJSON, &out); err != nil {
		t.Fatal(err)
	}
	return out.V
}

// TestHubTemplatesErrors: a template that fails for one cluster leaves that
// replica with its last good spec, names the cluster and error in the root's
// status and an Event, and the other cluster goes on; the error clears when
// fixed. A template that never resolved creates no replica, and
// disable-templates copies templates verbatim.
func TestHubTemplatesErrors(t *testing.T) {
	ensureTemplateClusters(t)
	ctx := context.Background()
	const ns = "hubtpl-errors"
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	setConfigMap(t, ns, "cfg-tpl-1", map[string]string{"v": "one"})
	setConfigMap(t, ns, "cfg-tpl-2", map[string]string{"v": "two"})
	value := `{{hub fromConfigMap "hubtpl-errors" (printf "cfg-%s" .ManagedClusterName) "v" hub}}`
	testkit.Apply(t, c, templatedPolicyYAML(ns, "p", "", "", value, "tpl-1", "tpl-2"))
	expectValues(t, ns, "p", map[string]string{"tpl-1": "one", "tpl-2": "two"})

	t.Run("a failing cluster keeps its last good replica, the other goes on", func(t *testing.T) {
		if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg-tpl-1"}}); err != nil {
			t.Fatal(err)
		}
		expectTemplatesCondition(t, ns, "p", metav1.ConditionFalse, "1 of 2 cluster(s)", "tpl-1:",
			"policy-templates[0] (ConfigurationPolicy p-cp)", `configmaps "cfg-tpl-1" not found`)
		expectEvent(t, ns, "p", "cluster tpl-1", "cfg-tpl-1")
		setConfigMap(t, ns, "cfg-tpl-2", map[string]string{"v": "two-b"})
		expectValues(t, ns, "p", map[string]string{"tpl-1": "one", "tpl-2": "two-b"})
	})
	t.Run("the error clears when fixed", func(t *testing.T) {
		setConfigMap(t, ns, "cfg-tpl-1", map[string]string{"v": "one-b"})
		expectValues(t, ns, "p", map[string]string{"tpl-1": "one-b", "tpl-2": "two-b"})
		expectTemplatesCondition(t, ns, "p", metav1.ConditionTrue)
	})
	t.Run("bad syntax creates no replica", func(t *testing.T) {
		testkit.Apply(t, c, templatedPolicyYAML(ns, "bad", "", "", `{{hub end hub}}`, "tpl-1"))
		expectTemplatesCondition(t, ns, "bad", metav1.ConditionFalse, "tpl-1", "unexpected {{end}}")
		expectEvent(t, ns, "bad", "cluster tpl-1")
		if v, annotations, _ := replicaValue(t, ns, "bad", "tpl-1"); annotations != nil {
			t.Errorf("a replica with %q", v)
		}
	})
	t.Run("disable-templates copies templates verbatim", func(t *testing.T) {
		testkit.Apply(t, c, templatedPolicyYAML(ns, "verbatim", "\n  annotations: {policy.open-cluster-management.io/disable-templates: \"true\"}",
			"", `{{hub .ManagedClusterName hub}}`, "tpl-1"))
		expectValues(t, ns, "verbatim", map[string]string{"tpl-1": "{{hub .ManagedClusterName hub}}"})
		if cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, "verbatim").Conditions, hub.ConditionHubTemplatesResolved); cond != nil {
			t.Errorf("condition %+v on a root whose templates are disabled", cond)
		}
	})
}

// TestHubTemplatesExample applies examples/templates/hub-templates.yaml with a
// decision for two of the examples' managed clusters and checks what each
// replica gets: its name, its setting (or the default), its region label, and
// the credential only encrypted.
func TestHubTemplatesExample(t *testing.T) {
	testkit.ApplyFile(t, c, "examples/api/managedclusters.yaml")
	testkit.ApplyFile(t, c, "examples/templates/hub-templates.yaml")
	testkit.Apply(t, c, `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: all-clusters-decision-1
  namespace: policies
  labels: {cluster.open-cluster-management.io/placement: all-clusters}
status:
  decisions:
  - {clusterName: cluster-a, reason: ""}
  - {clusterName: cluster-c, reason: ""}
`)
	want := map[string]map[string]string{
		"cluster-a": {"cluster": "cluster-a", "ntp-server": "eu-west-1.ntp.example.com", "region": "eu", "policy": "policy-hub-templates"},
		"cluster-c": {"cluster": "cluster-c", "ntp-server": "pool.ntp.org", "region": "eu", "policy": "policy-hub-templates"},
	}
	testkit.Eventually(t, 20*time.Second, "the example's replicas", func() string {
		for cluster, data := range want {
			p := &policyv1.Policy{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: "policies.policy-hub-templates"}, p); err != nil {
				return err.Error()
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw); err != nil {
				t.Fatal(err)
			}
			objects, _, _ := unstructured.NestedSlice(u.Object, "spec", "object-templates")
			got, _, _ := unstructured.NestedStringMap(objects[0].(map[string]any), "objectDefinition", "data")
			if fmt.Sprint(got) != fmt.Sprint(data) {
				return fmt.Sprintf("%s: %v, want %v", cluster, got, data)
			}
			token, _, _ := unstructured.NestedString(objects[1].(map[string]any), "objectDefinition", "data", "token")
			if !strings.HasPrefix(token, "$ocm_encrypted:") {
				return fmt.Sprintf("%s: token %q", cluster, token)
			}
		}
		return ""
	})
}

// TestHubTemplatesReachTheSpoke runs a spoke on a managed cluster of its own:
// an enforced policy whose hub templates read a ConfigMap and a Secret on the
// hub creates, on the managed cluster, a ConfigMap with the cluster's value and
// a Secret with the hub Secret's value, which travelled encrypted with the
// cluster's key (the spoke copies the key and decrypts).
func TestHubTemplatesReachTheSpoke(t *testing.T) {
	ctx := context.Background()
	const ns, cluster = "hubtpl-e2e", "tpl-e2e"
	managed, err := localplane.Start("spoke")
	testkit.FatalOrSkip(t, "starting the spoke API server", err)
	t.Cleanup(func() { _ = managed.Stop() })
	if err := localplane.EnsureCluster(ctx, c, cluster); err != nil {
		t.Fatal(err)
	}
	if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	setConfigMap(t, ns, "sites", map[string]string{cluster: "site-e2e"})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"token": "t0ken"}}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	spoketest.Start(t, plane.Config, managed.Config, cluster)
	testkit.Apply(t, c, `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: e2e, namespace: hubtpl-e2e}
spec:
  disabled: false
  remediationAction: enforce
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: e2e}
      spec:
        remediationAction: enforce
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: site, namespace: default}
            data:
              site: '{{hub fromConfigMap "hubtpl-e2e" "sites" .ManagedClusterName hub}}'
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: Secret
            metadata: {name: creds, namespace: default}
            type: Opaque
            data:
              token: '{{hub fromSecret "hubtpl-e2e" "creds" "token" hub}}'
---
`+testkit.PlacementRuleBinding(ns, "e2e", []string{cluster}, "e2e"))
	testkit.Eventually(t, 45*time.Second, "the managed cluster's ConfigMap and Secret", func() string {
		cm := &corev1.ConfigMap{}
		if err := managed.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "site"}, cm); err != nil {
			return "ConfigMap: " + err.Error()
		}
		if cm.Data["site"] != "site-e2e" {
			return fmt.Sprintf("ConfigMap data %v", cm.Data)
		}
		s := &corev1.Secret{}
		if err := managed.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "creds"}, s); err != nil {
			return "Secret: " + err.Error()
		}
		if string(s.Data["token"]) != "t0ken" {
			return fmt.Sprintf("Secret token %q", s.Data["token"])
		}
		return ""
	})
	if v, _, _ := replicaValueOf(t, ns, "e2e", cluster); strings.Contains(v, "dDBrZW4") || !strings.Contains(v, "$ocm_encrypted:") {
		t.Errorf("the replica holds %s", v)
	}
}

// replicaValueOf returns the raw policy template of root's replica for cluster.
func replicaValueOf(t *testing.T, ns, name, cluster string) (string, map[string]string, error) {
	t.Helper()
	p := &policyv1.Policy{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: replication.Name(ns, name)}, p)
	if err != nil {
		return "", nil, err
	}
	return string(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw), p.Annotations, nil
}

// TestHubTemplatesBounded: templates that would loop for hours or take
// gigabytes stop at their bounds and are reported on their roots, while
// another tenant's policy still propagates (issue 29: four looping roots used
// to hold every root worker).
func TestHubTemplatesBounded(t *testing.T) {
	ensureTemplateClusters(t)
	ctx := context.Background()
	const evil, good = "hubtpl-loop", "hubtpl-neighbour"
	for _, ns := range []string{evil, good} {
		if err := localplane.EnsureNamespace(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
	}
	loop := `{{hub range 100000 hub}}{{hub range 100000 hub}}{{hub end hub}}{{hub end hub}}`
	for i := range 4 {
		testkit.Apply(t, c, templatedPolicyYAML(evil, fmt.Sprintf("loop-%d", i), "", "", loop, "tpl-1", "tpl-2"))
	}
	testkit.Apply(t, c, templatedPolicyYAML(evil, "huge", "", "", `{{hub len (until 50000000) hub}}`, "tpl-1"))
	testkit.Apply(t, c, templatedPolicyYAML(good, "p", "", "", `{{hub .ManagedClusterName hub}}`, "tpl-1", "tpl-2"))

	expectValues(t, good, "p", map[string]string{"tpl-1": "tpl-1", "tpl-2": "tpl-2"})
	expectTemplatesCondition(t, evil, "loop-0", metav1.ConditionFalse, "time bound of 3s", "--template-timeout")
	expectTemplatesCondition(t, evil, "huge", metav1.ConditionFalse, "memory bound of 4Mi", "until would make more")
	for _, name := range []string{"loop-0", "huge"} {
		if v, _, _ := replicaValue(t, evil, name, "tpl-1"); v != "" {
			t.Errorf("%s has a replica: %q", name, v)
		}
	}
}
