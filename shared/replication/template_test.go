package replication

import (
	"reflect"
	"testing"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestInheritRemediationAction(t *testing.T) {
	obj := func(apiVersion, kind string, spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}
	}
	const policyGroup = "policy.open-cluster-management.io/v1"
	tests := []struct {
		name   string
		parent policyv1.RemediationAction
		in     map[string]any
		want   map[string]any
	}{
		{"config policy without the key gets it", "enforce",
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"severity": "low"}),
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"severity": "low", "remediationAction": "enforce"})},
		{"operator policy inform is overridden", "Enforce",
			obj("policy.open-cluster-management.io/v1beta1", "OperatorPolicy", map[string]any{"remediationAction": "inform"}),
			obj("policy.open-cluster-management.io/v1beta1", "OperatorPolicy", map[string]any{"remediationAction": "Enforce"})},
		{"certificate policy without the key gets it", "inform",
			obj(policyGroup, "CertificatePolicy", map[string]any{}),
			obj(policyGroup, "CertificatePolicy", map[string]any{"remediationAction": "inform"})},
		{"any other kind gets it too", "enforce",
			obj("example.com/v1", "Custom", map[string]any{}),
			obj("example.com/v1", "Custom", map[string]any{"remediationAction": "enforce"})},
		{"InformOnly is never enforced", "enforce",
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"remediationAction": "InformOnly"}),
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"remediationAction": "inform"})},
		{"informonly in any case, even without a parent action", "",
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"remediationAction": "informONLY"}),
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"remediationAction": "inform"})},
		{"no parent action keeps the template's", "",
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"remediationAction": "enforce"}),
			obj(policyGroup, "ConfigurationPolicy", map[string]any{"remediationAction": "enforce"})},
		{"gatekeeper constraint enforce is deny", "enforce",
			obj("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels", map[string]any{}),
			obj("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels", map[string]any{"enforcementAction": "deny"})},
		{"gatekeeper constraint inform is warn", "Inform",
			obj("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels", map[string]any{"enforcementAction": "deny"}),
			obj("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels", map[string]any{"enforcementAction": "warn"})},
		{"constraint template untouched", "enforce",
			obj("templates.gatekeeper.sh/v1", "ConstraintTemplate", map[string]any{}),
			obj("templates.gatekeeper.sh/v1", "ConstraintTemplate", map[string]any{})},
		{"no spec untouched", "enforce",
			map[string]any{"apiVersion": policyGroup, "kind": "ConfigurationPolicy"},
			map[string]any{"apiVersion": policyGroup, "kind": "ConfigurationPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			InheritRemediationAction(tt.parent, tt.in)
			if !reflect.DeepEqual(tt.in, tt.want) {
				t.Errorf("got %v, want %v", tt.in, tt.want)
			}
		})
	}
}
