package templates_test

import (
	"fmt"

	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// The hub resolves a replica's hub templates ({{hub ... hub}}) for its
// cluster. Templates that read only the hub context (.ManagedClusterName,
// .ManagedClusterLabels, .PolicyMetadata) need no API server: the library's
// resolver runs here without clients.
func ExampleResolveHubTemplates() {
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "site-config"},
		Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"site-config"},` +
				`"spec":{"object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"ConfigMap",` +
				`"metadata":{"name":"site","namespace":"default"},` +
				`"data":{"cluster":"{{hub .ManagedClusterName hub}}","env":"{{hub index .ManagedClusterLabels \"env\" hub}}"}}}]}}`,
		)}}}},
	}
	resolver, err := gotemplates.NewResolverWithClients(nil, nil, templates.HubResolverConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	replica := replication.Build(root, "prod-east", "", nil)
	err = templates.ResolveHubTemplates(resolver, replica, templates.HubInputs{
		Root: root, Cluster: "prod-east", ClusterLabels: map[string]string{"env": "prod"},
		Options: templates.HubResolveOptions(root, "prod-east"),
	})
	fmt.Println(err)
	fmt.Println(string(replica.Spec.PolicyTemplates[0].ObjectDefinition.Raw))
	// Output:
	// <nil>
	// {"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"site-config"},"spec":{"object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","data":{"cluster":"prod-east","env":"prod"},"kind":"ConfigMap","metadata":{"name":"site","namespace":"default"}}}]}}
}

// On the managed cluster, an object template's templates are resolved with the
// object's context: here .ObjectName and .Object, the object as it exists.
func ExampleResolveObjectDefinition() {
	resolver, err := gotemplates.NewResolverWithClients(nil, nil, gotemplates.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	raw := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"site","namespace":"default"},` +
		`"data":{"owner":"{{ .ObjectName }}-team","previous":"{{ .Object.data.owner }}"}}`)
	fmt.Printf("%+v\n", templates.ContextUses(raw))
	existing := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "site", "namespace": "default"},
		"data":     map[string]any{"owner": "nobody"},
	}
	res, err := templates.ResolveObjectDefinition(resolver, raw, templates.ObjectContext(existing, "site", "default"), gotemplates.ResolveOptions{})
	fmt.Println(string(res.JSON), res.Skip, res.Sensitive, err)
	// Output:
	// {Object:true ObjectName:true ObjectNamespace:false}
	// {"apiVersion":"v1","data":{"owner":"site-team","previous":"nobody"},"kind":"ConfigMap","metadata":{"name":"site","namespace":"default"}} false false <nil>
}

// TemplatedFields finds which fields of an object hold templates, and which
// side resolves them: a hub template is the hub's, any other the managed
// cluster's.
func ExampleTemplatedFields() {
	object := map[string]any{
		"metadata": map[string]any{"name": "site"},
		"data": map[string]any{
			"env":   `{{hub index .ManagedClusterLabels "env" hub}}`,
			"owner": `{{ .ObjectName }}`,
			"fixed": "plain",
		},
	}
	for _, f := range templates.TemplatedFields(object, "") {
		fmt.Println(f.Path, "hub:", f.Hub)
	}
	// Output:
	// data.env hub: true
	// data.owner hub: false
}
