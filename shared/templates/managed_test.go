package templates_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// managedCluster is the library's real resolver over fake clients (fakes of
// an API server, which these table tests do not start) holding objs.
func managedCluster(t *testing.T, objs ...map[string]any) *gotemplates.TemplateResolver {
	return fakeCluster(t, gotemplates.Config{}, objs...)
}

// fakeCluster is the library's real resolver with config over client-go's
// fake dynamic and discovery clients holding objs (ConfigMaps, Secrets,
// ClusterClaims and ManagedClusters).
func fakeCluster(t *testing.T, config gotemplates.Config, objs ...map[string]any) *gotemplates.TemplateResolver {
	t.Helper()
	var runtimeObjs []runtime.Object
	for _, o := range objs {
		runtimeObjs = append(runtimeObjs, &unstructured.Unstructured{Object: o})
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}:                                                       "ConfigMapList",
		{Version: "v1", Resource: "secrets"}:                                                          "SecretList",
		{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Resource: "clusterclaims"}: "ClusterClaimList",
		{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"}:     "ManagedClusterList",
	}, runtimeObjs...)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: metav1.Verbs{"get", "list", "watch"}},
			{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: metav1.Verbs{"get", "list", "watch"}},
		},
	}, {
		GroupVersion: "cluster.open-cluster-management.io/v1alpha1",
		APIResources: []metav1.APIResource{{Name: "clusterclaims", Kind: "ClusterClaim", Verbs: metav1.Verbs{"get", "list", "watch"}}},
	}, {
		GroupVersion: "cluster.open-cluster-management.io/v1",
		APIResources: []metav1.APIResource{{Name: "managedclusters", Kind: "ManagedCluster", Verbs: metav1.Verbs{"get", "list", "watch"}}},
	}}}}
	r, err := gotemplates.NewResolverWithClients(dyn, disc, config)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func configMapObj(ns, name string, data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": ns, "name": name}, "data": data}
}

func TestResolveObjectDefinition(t *testing.T) {
	r := managedCluster(t,
		configMapObj("cfg", "settings", map[string]any{"owner": "team-a", "replicas": "3", "lines": "a\nb"}),
		map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": "cfg", "name": "creds"},
			"data": map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("s3cret"))}},
		map[string]any{"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "ClusterClaim",
			"metadata": map[string]any{"name": "region.open-cluster-management.io"}, "spec": map[string]any{"value": "eu-west-1"}},
	)
	cases := []struct {
		name      string
		raw       string
		context   any
		want      string // JSON the resolution must equal
		skip      bool
		sensitive bool
		err       string // substring of the error
	}{
		{
			name: "fromConfigMap",
			raw:  `{"kind":"ConfigMap","data":{"owner":"{{ fromConfigMap \"cfg\" \"settings\" \"owner\" }}"}}`,
			want: `{"data":{"owner":"team-a"},"kind":"ConfigMap"}`,
		},
		{
			name: "toInt makes a number of a non-string field",
			raw:  `{"spec":{"replicas":"{{ fromConfigMap \"cfg\" \"settings\" \"replicas\" | toInt }}"}}`,
			want: `{"spec":{"replicas":3}}`,
		},
		{
			name: "toBool makes a boolean",
			raw:  `{"spec":{"paused":"{{ \"true\" | toBool }}"}}`,
			want: `{"spec":{"paused":true}}`,
		},
		{
			name: "toLiteral makes an object of a string",
			raw:  `{"spec":{"config":"{{ \"{\\\"a\\\": 1}\" | toLiteral }}"}}`,
			want: `{"spec":{"config":{"a":1}}}`,
		},
		{
			name: "fromClusterClaim",
			raw:  `{"metadata":{"labels":{"region":"{{ fromClusterClaim \"region.open-cluster-management.io\" }}"}}}`,
			want: `{"metadata":{"labels":{"region":"eu-west-1"}}}`,
		},
		{
			name: "copyConfigMapData makes an object",
			raw:  `{"data":"{{ copyConfigMapData \"cfg\" \"settings\" }}"}`,
			want: `{"data":{"lines":"a\nb","owner":"team-a","replicas":"3"}}`,
		},
		{
			name: "lookup of a missing object is empty",
			raw:  `{"x":"{{ (lookup \"v1\" \"ConfigMap\" \"cfg\" \"missing\").data }}"}`,
			want: `{"x":"\u003cno value\u003e"}`,
		},
		{
			name:      "fromSecret is sensitive",
			raw:       `{"data":{"p":"{{ fromSecret \"cfg\" \"creds\" \"password\" }}"}}`,
			want:      `{"data":{"p":"` + base64.StdEncoding.EncodeToString([]byte("s3cret")) + `"}}`,
			sensitive: true,
		},
		{
			name:    "object context",
			raw:     `{"metadata":{"labels":{"ns":"{{ .ObjectNamespace }}","name":"{{ .ObjectName }}","had":"{{ .Object.data.k }}"}}}`,
			context: templates.ObjectContext(map[string]any{"data": map[string]any{"k": "v"}}, "obj", "ns1"),
			want:    `{"metadata":{"labels":{"had":"v","name":"obj","ns":"ns1"}}}`,
		},
		{
			name: "skipObject leaves the object out",
			raw:  `{"kind":"ConfigMap","x":"{{ skipObject }}"}`,
			skip: true,
		},
		{
			name: "skipObject false keeps it",
			raw:  `{"x":"{{ skipObject false }}y"}`,
			want: `{"x":"y"}`,
		},
		{
			name: "skipObject with a non-boolean is an error",
			raw:  `{"x":"{{ skipObject \"yes\" }}"}`,
			err:  "expected boolean but received 'yes'",
		},
		{
			name: "bad syntax is an error",
			raw:  `{"x":"{{ fromConfigMap \"cfg\" }"}`,
			err:  "unexpected",
		},
		{
			name: "a wrong argument count is an error",
			raw:  `{"x":"{{ fromConfigMap \"cfg\" \"settings\" }}"}`,
			err:  "wrong number of args",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := templates.ResolveObjectDefinition(r, []byte(c.raw), c.context, gotemplates.ResolveOptions{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Skip != c.skip || got.Sensitive != c.sensitive {
				t.Fatalf("skip %v sensitive %v, want %v %v", got.Skip, got.Sensitive, c.skip, c.sensitive)
			}
			if !c.skip && string(got.JSON) != c.want {
				t.Fatalf("resolved %s, want %s", got.JSON, c.want)
			}
		})
	}
}

// encrypted is value encrypted as the hub's protect makes it with key and iv.
func encrypted(t *testing.T, r *gotemplates.TemplateResolver, key, iv []byte, value string) string {
	t.Helper()
	res, err := r.ResolveTemplate([]byte(`{"v":"{{ \"`+value+`\" | protect }}"}`), nil, &gotemplates.ResolveOptions{
		EncryptionConfig: gotemplates.EncryptionConfig{EncryptionEnabled: true, AESKey: key, InitializationVector: iv},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ V string }
	if err := json.Unmarshal(res.ResolvedJSON, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.V, "$ocm_encrypted:") {
		t.Fatalf("protect made %q", out.V)
	}
	return out.V
}

func TestDecryption(t *testing.T) {
	r := managedCluster(t)
	key := []byte(strings.Repeat("k", templates.KeySize))
	previous := []byte(strings.Repeat("p", templates.KeySize))
	iv := []byte(strings.Repeat("i", gotemplates.IVSize))
	ivAnnotation := map[string]string{templates.IVAnnotation: base64.StdEncoding.EncodeToString(iv)}
	withKey := encrypted(t, r, key, iv, "plain")
	withPrevious := encrypted(t, r, previous, iv, "older")
	cases := []struct {
		name        string
		annotations map[string]string
		keyData     map[string][]byte
		value       string
		want        string
		err         string // substring of ErrorMessage of the error
	}{
		{name: "current key", annotations: ivAnnotation, keyData: map[string][]byte{"key": key}, value: withKey, want: "plain"},
		{name: "previous key after a rotation", annotations: ivAnnotation, keyData: map[string][]byte{"key": key, "previousKey": previous}, value: withPrevious, want: "older"},
		{name: "no key Secret", annotations: ivAnnotation, value: withKey, err: "failed to get the encryption key from Secret ns/policy-encryption-key"},
		{name: "IV not base64", annotations: map[string]string{templates.IVAnnotation: "%%"}, keyData: map[string][]byte{"key": key}, value: withKey, err: "is not Base64"},
		{name: "IV of the wrong size", annotations: map[string]string{templates.IVAnnotation: "YWJj"}, keyData: map[string][]byte{"key": key}, value: withKey,
			err: `The "policy.open-cluster-management.io/encryption-iv" annotation value is not a valid initialization vector`},
		{name: "invalid key", annotations: ivAnnotation, keyData: map[string][]byte{"key": []byte("short")}, value: withKey,
			err: `The "policy-encryption-key" Secret contains an invalid AES key`},
		{name: "wrong key", annotations: ivAnnotation, keyData: map[string][]byte{"key": previous}, value: withKey, err: "padding"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := func() (string, error) {
				enc, err := templates.DecryptionConfig(c.annotations, c.keyData, "ns")
				if err != nil {
					return "", err
				}
				res, err := templates.ResolveObjectDefinition(r, []byte(`{"v":"`+c.value+`"}`), nil, gotemplates.ResolveOptions{EncryptionConfig: enc})
				if err != nil {
					return "", err
				}
				return string(res.JSON), nil
			}()
			if c.err != "" {
				if err == nil || !strings.Contains(templates.ErrorMessage(err), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"v":"` + c.want + `"}`; got != want {
				t.Fatalf("decrypted %s, want %s", got, want)
			}
		})
	}
}

func TestResolveObjectTemplatesRaw(t *testing.T) {
	r := managedCluster(t, configMapObj("cfg", "teams", map[string]any{"names": "a b c"}),
		map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": "cfg", "name": "creds"},
			"data": map[string]any{"user": base64.StdEncoding.EncodeToString([]byte("x"))}})
	cases := []struct {
		name          string
		raw           string
		wantNames     []string
		wantSensitive bool
		err           string
	}{
		{
			name: "range makes one object template per item",
			raw: `{{- range (splitList " " (fromConfigMap "cfg" "teams" "names")) }}
- complianceType: musthave
  objectDefinition:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: team-{{ . }}
      namespace: default
{{- end }}`,
			wantNames: []string{"team-a", "team-b", "team-c"},
		},
		{
			name: "a Secret read is sensitive",
			raw: `- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: 'user-{{ fromSecret "cfg" "creds" "user" | base64dec }}', namespace: default}}`,
			wantNames:     []string{"user-x"},
			wantSensitive: true,
		},
		{
			name: "no template: the YAML as written",
			raw: `- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: plain, namespace: default}}`,
			wantNames: []string{"plain"},
		},
		{name: "YAML that is not a list", raw: `complianceType: musthave`, err: "Error parsing object-templates-raw YAML"},
		{name: "a template error", raw: `{{ fromConfigMap }}`, err: "wrong number of args"},
		{name: "a result that is not a list", raw: `{{ "a: b" }}`, err: "failed unmarshalling resolved object-templates-raw template"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, sensitive, err := templates.ResolveObjectTemplatesRaw(r, c.raw, gotemplates.ResolveOptions{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ot := range got {
				var def struct {
					Metadata struct{ Name string }
				}
				if err := json.Unmarshal(ot.ObjectDefinition.Raw, &def); err != nil {
					t.Fatal(err)
				}
				names = append(names, def.Metadata.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.wantNames, ",") {
				t.Fatalf("object templates named %v, want %v", names, c.wantNames)
			}
			if sensitive != c.wantSensitive {
				t.Fatalf("sensitive %t, want %t", sensitive, c.wantSensitive)
			}
		})
	}
}

// TestResolveObjectTemplatesRawKeepsObjectSelector: an objectSelector
// written in object-templates-raw reaches the object template, with and
// without templates in the YAML.
func TestResolveObjectTemplatesRawKeepsObjectSelector(t *testing.T) {
	r := managedCluster(t)
	for _, raw := range []string{
		`- {complianceType: musthave, objectSelector: {matchLabels: {team: a}}, objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {k: v}}}`,
		`- {complianceType: musthave, objectSelector: {matchLabels: {team: '{{ "a" }}'}}, objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {k: v}}}`,
	} {
		got, _, err := templates.ResolveObjectTemplatesRaw(r, raw, gotemplates.ResolveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ObjectSelector == nil || got[0].ObjectSelector.MatchLabels["team"] != "a" {
			t.Errorf("%s: the objectSelector is lost: %+v", raw, got)
		}
	}
}

func TestResolveJSONField(t *testing.T) {
	r := managedCluster(t, configMapObj("cfg", "op", map[string]any{"channel": "stable-2", "config": `{"env":[{"name":"A","value":"1"}]}`}))
	var out map[string]any
	raw := `{"name":"op","channel":"{{ fromConfigMap \"cfg\" \"op\" \"channel\" }}","config":"{{ fromConfigMap \"cfg\" \"op\" \"config\" | toLiteral }}"}`
	if err := templates.ResolveJSONField(r, "spec.subscription", []byte(raw), gotemplates.ResolveOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(out)
	if want := `{"channel":"stable-2","config":{"env":[{"name":"A","value":"1"}]},"name":"op"}`; string(got) != want {
		t.Fatalf("resolved %s, want %s", got, want)
	}
	err := templates.ResolveJSONField(r, "spec.subscription", []byte(`{"name":"{{ nope }}"}`), gotemplates.ResolveOptions{}, &out)
	if err == nil || !strings.HasPrefix(err.Error(), "could not resolve the templates of spec.subscription: ") {
		t.Fatalf("error %v", err)
	}
}

func TestContextUses(t *testing.T) {
	cases := []struct {
		raw  string
		want templates.TemplateUses
	}{
		{`{"a":"b"}`, templates.TemplateUses{}},
		{`{"a":"{{ .ObjectNamespace }}"}`, templates.TemplateUses{ObjectNamespace: true}},
		{`{"a":"{{ .ObjectName }}"}`, templates.TemplateUses{ObjectName: true}},
		{`{"a":"{{ .Object.metadata.name }}"}`, templates.TemplateUses{Object: true}},
		{`{"a":"{{ fromConfigMap \"a\" \"b\" \"c\" }}"}`, templates.TemplateUses{}},
	}
	for _, c := range cases {
		if got := templates.ContextUses([]byte(c.raw)); got != c.want {
			t.Errorf("ContextUses(%s) = %+v, want %+v", c.raw, got, c.want)
		}
	}
}

func TestHubTemplateErrorMessage(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		want        string
		failed      bool
	}{
		{name: "annotation", annotations: map[string]string{templates.HubErrorAnnotation: "boom"}, want: "boom", failed: true},
		{name: "empty annotation", annotations: map[string]string{templates.HubErrorAnnotation: ""}},
		{name: "none"},
	}
	for _, c := range cases {
		got, failed := templates.HubTemplateErrorMessage(c.annotations)
		if got != c.want || failed != c.failed {
			t.Errorf("%s: %q %v, want %q %v", c.name, got, failed, c.want, c.failed)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	other := errors.New("failed getting the ConfigMap x from y")
	if got := templates.ErrorMessage(other); got != other.Error() {
		t.Fatalf("%q", got)
	}
}
