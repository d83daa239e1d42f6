package templates_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// fakeResolver is the library's real resolver with the hub's delimiters over
// fake clients (fakeCluster) holding ConfigMaps and Secrets in two namespaces
// and two ManagedClusters.
func fakeResolver(t *testing.T) *gotemplates.TemplateResolver {
	t.Helper()
	obj := func(apiVersion, kind, ns, name string, labels map[string]any, data map[string]any) map[string]any {
		meta := map[string]any{"name": name, "labels": labels}
		if ns != "" {
			meta["namespace"] = ns
		}
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
		if data != nil {
			o["data"] = data
		}
		return o
	}
	return fakeCluster(t, gotemplates.Config{StartDelim: templates.HubStartDelim, StopDelim: templates.HubStopDelim},
		obj("v1", "ConfigMap", "policies", "sites", nil, map[string]any{"cluster-a": "site-1", "cluster-b": "site-2"}),
		obj("v1", "ConfigMap", "other", "sites", nil, map[string]any{"cluster-a": "elsewhere"}),
		obj("v1", "Secret", "policies", "creds", nil, map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("s3cret"))}),
		obj("cluster.open-cluster-management.io/v1", "ManagedCluster", "", "cluster-a", map[string]any{"env": "prod"}, nil),
		obj("cluster.open-cluster-management.io/v1", "ManagedCluster", "", "cluster-b", map[string]any{"env": "dev"}, nil),
	)
}

// rootWith is a root policy in namespace policies whose policy templates are
// ConfigurationPolicies with the given name annotation values.
func rootWith(annotations map[string]string, sa string, values ...string) *policyv1.Policy {
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "policies", Annotations: annotations,
		Labels: map[string]string{"team": "a"}}}
	if sa != "" {
		root.Spec.HubTemplateOptions = &policyv1.HubTemplateOptions{ServiceAccountName: sa}
	}
	for i, v := range values {
		raw := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy",` +
			`"metadata":{"name":"cp` + string(rune('0'+i)) + `"},"spec":{"value":` + strconvQuote(v) + `}}`
		root.Spec.PolicyTemplates = append(root.Spec.PolicyTemplates, &policyv1.PolicyTemplate{
			ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}})
	}
	return root
}

func strconvQuote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// value reads spec.value of a resolved policy template.
func value(t *testing.T, tmpl *policyv1.PolicyTemplate) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(tmpl.ObjectDefinition.Raw); err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "value")
	return v
}

func TestResolveHubTemplates(t *testing.T) {
	r := fakeResolver(t)
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		sa          string
		cluster     string
		labels      map[string]string
		values      []string
		want        []string // resolved spec.value per template; nil: error
		wantErr     string
	}{
		{name: "cluster name and its ConfigMap entry, cluster-a", cluster: "cluster-a",
			values: []string{`{{hub .ManagedClusterName hub}}={{hub fromConfigMap "policies" "sites" .ManagedClusterName hub}}`},
			want:   []string{"cluster-a=site-1"}},
		{name: "cluster name and its ConfigMap entry, cluster-b", cluster: "cluster-b",
			values: []string{`{{hub .ManagedClusterName hub}}={{hub fromConfigMap "policies" "sites" .ManagedClusterName hub}}`},
			want:   []string{"cluster-b=site-2"}},
		{name: "cluster labels and policy metadata", cluster: "cluster-a", labels: map[string]string{"env": "prod"},
			values: []string{`{{hub index .ManagedClusterLabels "env" hub}}/{{hub .PolicyMetadata.name hub}}/{{hub .PolicyMetadata.labels.team hub}}`},
			want:   []string{"prod/p/a"}},
		{name: "untemplated policy templates are kept", cluster: "cluster-a",
			values: []string{"plain", `{{ .Spoke }}`},
			want:   []string{"plain", `{{ .Spoke }}`}},
		{name: "without a ServiceAccount another namespace is refused", cluster: "cluster-a",
			values:  []string{`{{hub fromConfigMap "other" "sites" "cluster-a" hub}}`},
			wantErr: `policy-templates[0] (ConfigurationPolicy cp0)`},
		{name: "with a ServiceAccount another namespace is read with its rights", cluster: "cluster-a", sa: "reader",
			values: []string{`{{hub fromConfigMap "other" "sites" "cluster-a" hub}}`},
			want:   []string{"elsewhere"}},
		{name: "the cluster's own ManagedCluster may be looked up", cluster: "cluster-a",
			values: []string{`{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" "cluster-a").metadata.labels.env hub}}`},
			want:   []string{"prod"}},
		{name: "another cluster's ManagedCluster may not", cluster: "cluster-a",
			values:  []string{`{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" "cluster-b").metadata.labels.env hub}}`},
			wantErr: "cluster-b"},
		{name: "all or nothing: a failing second template leaves the first unresolved", cluster: "cluster-a",
			values:  []string{`{{hub .ManagedClusterName hub}}`, `{{hub fromConfigMap "policies" "missing" "k" hub}}`},
			wantErr: "policy-templates[1] (ConfigurationPolicy cp1)"},
		{name: "bad syntax names the template", cluster: "cluster-a",
			values:  []string{`{{hub end hub}}`},
			wantErr: "policy-templates[0]"},
		{name: "disable-templates copies the templates verbatim", cluster: "cluster-a",
			annotations: map[string]string{templates.DisableAnnotation: "true"},
			values:      []string{`{{hub .ManagedClusterName hub}}`},
			want:        []string{`{{hub .ManagedClusterName hub}}`}},
		{name: "disable-templates false resolves", cluster: "cluster-a",
			annotations: map[string]string{templates.DisableAnnotation: "false"},
			values:      []string{`{{hub .ManagedClusterName hub}}`},
			want:        []string{"cluster-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := rootWith(tc.annotations, tc.sa, tc.values...)
			replica := root.DeepCopy()
			before := replica.DeepCopy()
			err := templates.ResolveHubTemplates(r, replica, templates.HubInputs{Root: root, Cluster: tc.cluster, ClusterLabels: tc.labels,
				Options: templates.HubResolveOptions(root, tc.cluster)})
			if tc.want == nil {
				var hubErr *templates.HubTemplateError
				if !errors.As(err, &hubErr) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a templates.HubTemplateError naming %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), `"apiVersion"`) {
					t.Errorf("the message quotes the whole template: %v", err)
				}
				for i := range replica.Spec.PolicyTemplates {
					if !bytes.Equal(replica.Spec.PolicyTemplates[i].ObjectDefinition.Raw, before.Spec.PolicyTemplates[i].ObjectDefinition.Raw) {
						t.Errorf("template %d changed on error: %s", i, replica.Spec.PolicyTemplates[i].ObjectDefinition.Raw)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				if got := value(t, replica.Spec.PolicyTemplates[i]); got != w {
					t.Errorf("template %d: %q, want %q", i, got, w)
				}
			}
			if _, ok := replica.Annotations[templates.IVAnnotation]; ok {
				t.Error("an IV annotation without encryption")
			}
		})
	}
}

func TestResolveHubTemplatesEncryption(t *testing.T) {
	r := fakeResolver(t)
	key := bytes.Repeat([]byte{7}, templates.KeySize)
	ivA := bytes.Repeat([]byte{1}, gotemplates.IVSize)
	ivB := bytes.Repeat([]byte{2}, gotemplates.IVSize)
	secretB64 := base64.StdEncoding.EncodeToString([]byte("s3cret")) // fromSecret gives the data as stored
	for _, tc := range []struct {
		name       string
		previousIV string
		random     []byte
		key        func() ([]byte, error)
		wantIV     []byte
		wantErr    string
	}{
		{name: "a new IV from the random reader", random: ivA, key: func() ([]byte, error) { return key, nil }, wantIV: ivA},
		{name: "a valid previous IV is kept", previousIV: base64.StdEncoding.EncodeToString(ivB), random: ivA,
			key: func() ([]byte, error) { return key, nil }, wantIV: ivB},
		{name: "an invalid previous IV is replaced", previousIV: "bm90IGFuIElW", random: ivA,
			key: func() ([]byte, error) { return key, nil }, wantIV: ivA},
		{name: "no key source", random: ivA, wantErr: "encryption is not available"},
		{name: "a key of the wrong size", random: ivA, key: func() ([]byte, error) { return []byte("short"), nil },
			wantErr: "is 5 bytes, not 32"},
		{name: "the key cannot be read", random: ivA, key: func() ([]byte, error) { return nil, errors.New("forbidden") },
			wantErr: "the encryption key of cluster cluster-a: forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := rootWith(nil, "", `{{hub fromSecret "policies" "creds" "password" hub}}`, `{{hub "plain" | protect hub}}`)
			replica := root.DeepCopy()
			if tc.previousIV != "" {
				replica.Annotations = map[string]string{templates.IVAnnotation: tc.previousIV}
			}
			err := templates.ResolveHubTemplates(r, replica, templates.HubInputs{Root: root, Cluster: "cluster-a",
				Options: templates.HubResolveOptions(root, "cluster-a"), Key: tc.key, PreviousIV: tc.previousIV,
				Random: bytes.NewReader(tc.random)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantIV := base64.StdEncoding.EncodeToString(tc.wantIV)
			if got := replica.Annotations[templates.IVAnnotation]; got != wantIV {
				t.Errorf("replica IV %q, want %q", got, wantIV)
			}
			for i, tmpl := range replica.Spec.PolicyTemplates {
				v := value(t, tmpl)
				if !strings.HasPrefix(v, "$ocm_encrypted:") || strings.Contains(v, secretB64) {
					t.Errorf("template %d value %q is not encrypted", i, v)
				}
				u := &unstructured.Unstructured{}
				_ = u.UnmarshalJSON(tmpl.ObjectDefinition.Raw)
				if got := u.GetAnnotations()[templates.IVAnnotation]; got != wantIV {
					t.Errorf("template %d IV %q, want %q", i, got, wantIV)
				}
			}
			// The spoke's view: the library decrypts with the same key and IV.
			dec, err := fakeResolver(t).ResolveTemplate([]byte(`{"v":"`+value(t, replica.Spec.PolicyTemplates[0])+`"}`), nil,
				&gotemplates.ResolveOptions{EncryptionConfig: gotemplates.EncryptionConfig{
					DecryptionEnabled: true, AESKey: key, InitializationVector: tc.wantIV}})
			if err != nil || !strings.Contains(string(dec.ResolvedJSON), secretB64) {
				t.Errorf("decrypted %s, %v", dec.ResolvedJSON, err)
			}
		})
	}
}

// fakeQueryAPI stands in for the library's caching query API (which needs a
// running dependency watcher) in the transformer's unit test.
type fakeQueryAPI struct{ clusters map[string]map[string]string }

func (f fakeQueryAPI) Get(_ schema.GroupVersionKind, _, name string) (*unstructured.Unstructured, error) {
	l, ok := f.clusters[name]
	if !ok {
		return nil, errors.New("not found")
	}
	u := &unstructured.Unstructured{}
	u.SetLabels(l)
	return u, nil
}

func (f fakeQueryAPI) List(schema.GroupVersionKind, string, labels.Selector) ([]unstructured.Unstructured, error) {
	return nil, nil
}

func TestManagedClusterLabelsTransformer(t *testing.T) {
	api := fakeQueryAPI{clusters: map[string]map[string]string{"cluster-a": {"env": "prod"}}}
	root := rootWith(nil, "")
	got, err := templates.ManagedClusterLabelsTransformer("cluster-a")(api, templates.NewHubContext(root, "cluster-a", nil))
	if err != nil || got.(templates.HubContext).ManagedClusterLabels["env"] != "prod" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := templates.ManagedClusterLabelsTransformer("gone")(api, templates.NewHubContext(root, "gone", nil)); err == nil {
		t.Error("a missing ManagedCluster is not an error")
	}
	if got, err := templates.ManagedClusterLabelsTransformer("cluster-a")(api, "other"); err != nil || got != "other" {
		t.Errorf("another context changed: %v, %v", got, err)
	}
}

// TestResolveHubTemplatesNeverWritesASecretInClear: however a template reads
// a Secret, its value reaches the replica encrypted, or the template is
// refused (issue 29: OCM's pattern sees fromSecret only right after
// "{{hub").
func TestResolveHubTemplatesNeverWritesASecretInClear(t *testing.T) {
	r := fakeResolver(t)
	key := bytes.Repeat([]byte{7}, templates.KeySize)
	secretB64 := base64.StdEncoding.EncodeToString([]byte("s3cret"))
	for _, tc := range []struct {
		name, value string
		refused     bool
	}{
		{"fromSecret in parentheses", `{{hub (fromSecret "policies" "creds" "password") hub}}`, false},
		{"fromSecret through printf and base64dec", `{{hub printf "%s" (fromSecret "policies" "creds" "password") | base64dec hub}}`, false},
		{"fromSecret through b64dec and upper", `{{hub fromSecret "policies" "creds" "password" | b64dec | upper hub}}`, false},
		{"copySecretData in parentheses", `{{hub (copySecretData "policies" "creds") hub}}`, false},
		{"fromSecret in a variable", `{{hub $s := fromSecret "policies" "creds" "password" hub}}{{hub $s | b64dec hub}}`, false},
		{"lookup of a Secret", `{{hub (lookup "v1" "Secret" "policies" "creds").data.password | b64dec hub}}`, true},
		{"lookup of a kind named by a variable", `{{hub $k := "Secret" hub}}{{hub (lookup "v1" $k "policies" "creds").data.password hub}}`, true},
		{"lookup beside fromSecret", `{{hub fromSecret "policies" "creds" "password" hub}}{{hub (lookup "v1" "Secret" "policies" "creds").data.password hub}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := rootWith(nil, "", tc.value)
			replica := root.DeepCopy()
			err := templates.ResolveHubTemplates(r, replica, templates.HubInputs{Root: root, Cluster: "cluster-a",
				Options: templates.HubResolveOptions(root, "cluster-a"), Key: func() ([]byte, error) { return key, nil },
				Random: bytes.NewReader(bytes.Repeat([]byte{1}, gotemplates.IVSize))})
			if tc.refused {
				if !errors.Is(err, templates.ErrSecretInClear) {
					t.Fatalf("got %v, want ErrSecretInClear", err)
				}
				if strings.Contains(string(replica.Spec.PolicyTemplates[0].ObjectDefinition.Raw), secretB64) {
					t.Error("a refused replica holds the secret")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := value(t, replica.Spec.PolicyTemplates[0])
			for _, clear := range []string{secretB64, "s3cret", "S3CRET"} {
				if strings.Contains(v, clear) {
					t.Errorf("the replica holds %q in clear: %q", clear, v)
				}
			}
			if replica.Annotations[templates.IVAnnotation] == "" {
				t.Error("no IV: the template was not resolved with encryption")
			}
		})
	}
}

// TestResolveHubTemplatesBounded: a replica's templates are resolved within
// the inputs' limits.
func TestResolveHubTemplatesBounded(t *testing.T) {
	root := rootWith(nil, "", `{{hub len (until 50000000) hub}}`)
	replica := root.DeepCopy()
	err := templates.ResolveHubTemplates(fakeResolver(t), replica, templates.HubInputs{Root: root, Cluster: "cluster-a",
		Options: templates.HubResolveOptions(root, "cluster-a"), Limits: templates.Limits{MemorySetting: "--x"}})
	var hubErr *templates.HubTemplateError
	if !errors.As(err, &hubErr) || !templates.IsBoundError(err) || !strings.Contains(err.Error(), "policy-templates[0]") {
		t.Fatalf("got %v, want a HubTemplateError wrapping a BoundError", err)
	}
}
