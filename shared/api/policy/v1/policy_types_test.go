package v1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestDefinitionMeta(t *testing.T) {
	for _, tc := range []struct {
		name                                 string
		tmpl                                 *policyv1.PolicyTemplate
		ok                                   bool
		apiVersion, kind, namespace, objName string
	}{
		{name: "nil template", tmpl: nil},
		{
			name: "as written",
			tmpl: &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(
				`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"cp","namespace":"ns"},"spec":{}}`)}},
			ok: true, apiVersion: "policy.open-cluster-management.io/v1", kind: "ConfigurationPolicy", namespace: "ns", objName: "cp",
		},
		{
			name: "a hub template elsewhere, labels not a map",
			tmpl: &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(
				`{"apiVersion":"v1","kind":"ConfigurationPolicy","metadata":{"name":"cp","labels":"{{hub .x hub}}"},"spec":{"x":"{{hub fromSecret \"a\" \"b\" \"c\" hub}}"}}`)}},
			ok: true, apiVersion: "v1", kind: "ConfigurationPolicy", objName: "cp",
		},
		{
			name: "Object when there is no Raw",
			tmpl: &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Object: &policyv1.ConfigurationPolicy{}}},
			ok:   true,
		},
		{name: "no definition", tmpl: &policyv1.PolicyTemplate{}},
		{
			name: "name not a string",
			tmpl: &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy","metadata":{"name":3}}`)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, ok := tc.tmpl.DefinitionMeta()
			if ok != tc.ok || def.APIVersion != tc.apiVersion || def.Kind != tc.kind || def.Namespace != tc.namespace || def.Name != tc.objName {
				t.Errorf("DefinitionMeta() = %q %q %q %q, %v; want %q %q %q %q, %v",
					def.APIVersion, def.Kind, def.Namespace, def.Name, ok, tc.apiVersion, tc.kind, tc.namespace, tc.objName, tc.ok)
			}
		})
	}
}
