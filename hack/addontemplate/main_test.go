package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/yaml"
)

const skeleton = `apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {name: fleetpolicy}
spec:
  addonName: fleetpolicy
  agentSpec: {workload: {manifests: []}}
  registration: [{type: KubeClient}]
`

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: policies.policy.open-cluster-management.io}
`

const agent = `apiVersion: v1
kind: Namespace
metadata: {name: fleetpolicy-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fleetpolicy-spoke, namespace: fleetpolicy-system}
`

// TestGenerate: the objects of every source land in the template in order,
// the orphaned kinds annotated; what cannot be a manifest is refused, naming
// where it is.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	template := write("template.yaml", skeleton)
	crdFile := write("crd.yaml", crd)

	out, err := generate(template, []string{"CustomResourceDefinition"}, []string{crdFile, "-"}, strings.NewReader(agent))
	if err != nil {
		t.Fatal(err)
	}
	var got addonv1alpha1.AddOnTemplate
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	manifests := got.Spec.AgentSpec.Workload.Manifests
	if len(manifests) != 3 || got.Spec.Registration[0].Type != addonv1alpha1.RegistrationTypeKubeClient {
		t.Fatalf("template %+v: want 3 manifests and the registration kept", got.Spec)
	}
	for i, want := range []string{`"kind":"CustomResourceDefinition"`, `"kind":"Namespace"`, `"kind":"Deployment"`} {
		if !strings.Contains(string(manifests[i].Raw), want) {
			t.Errorf("manifest %d is %s, want %s", i, manifests[i].Raw, want)
		}
	}
	if !strings.Contains(string(manifests[0].Raw), addonv1alpha1.DeletionOrphanAnnotationKey) ||
		strings.Contains(string(manifests[2].Raw), addonv1alpha1.DeletionOrphanAnnotationKey) {
		t.Errorf("only the CRD is left on removal: %s / %s", manifests[0].Raw, manifests[2].Raw)
	}

	for _, tc := range []struct {
		name, template, stdin, want string
	}{
		{name: "manifests in the template", template: write("full.yaml", strings.Replace(skeleton, "manifests: []", "manifests: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]", 1)), stdin: agent, want: "must be empty"},
		{name: "an unknown template field", template: write("typo.yaml", skeleton+"  registrations: []\n"), stdin: agent, want: "unknown field"},
		{name: "an object without a name", template: template, stdin: "apiVersion: v1\nkind: Namespace\n", want: "standard input: document 1: apiVersion, kind and metadata.name are required"},
		{name: "the same object twice", template: template, stdin: agent + "---\n" + agent, want: "Namespace /fleetpolicy-system is also in standard input"},
		{name: "not YAML", template: template, stdin: "kind: [", want: "document 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := generate(tc.template, nil, []string{"-"}, strings.NewReader(tc.stdin))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
