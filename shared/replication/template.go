package replication

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// LabelPolicy, on a policy template synced to the managed cluster, names the
// replicated policy the template belongs to (as OCM's framework add-on
// labels it).
const LabelPolicy = "policy.open-cluster-management.io/policy"

const (
	// gatekeeperConstraintsGroup holds Gatekeeper constraints, whose action field
	// is spec.enforcementAction.
	gatekeeperConstraintsGroup = "constraints.gatekeeper.sh"
	// gatekeeperTemplatesGroup holds ConstraintTemplates, which have no action.
	gatekeeperTemplatesGroup = "templates.gatekeeper.sh"
)

// InheritRemediationAction writes the parent Policy's remediationAction (the
// replica's, after binding overrides and rollout) onto a policy template object,
// as OCM's governance-policy-framework-addon does when it syncs a template:
//
//   - a Gatekeeper constraint gets spec.enforcementAction "warn" for inform and
//     "deny" for enforce; a ConstraintTemplate is left alone;
//   - any other template whose spec.remediationAction is InformOnly (any
//     capitalisation) gets "inform", whatever the parent says;
//   - any other template gets the parent's value, whether or not it had the key.
//
// A template without a spec object, or a parent without a remediationAction,
// keeps what it has. template is changed in place.
func InheritRemediationAction(parent policyv1.RemediationAction, template map[string]any) {
	spec, ok := template["spec"].(map[string]any)
	if !ok {
		return
	}
	apiVersion, _ := template["apiVersion"].(string)
	switch schema.FromAPIVersionAndKind(apiVersion, "").Group {
	case gatekeeperConstraintsGroup:
		switch {
		case parent.IsInform():
			spec["enforcementAction"] = "warn"
		case parent.IsEnforce():
			spec["enforcementAction"] = "deny"
		}
		return
	case gatekeeperTemplatesGroup:
		return
	}
	if own, ok := spec["remediationAction"].(string); ok && policyv1.TemplateRemediationAction(own).IsInformOnly() {
		spec["remediationAction"] = "inform"
		return
	}
	if parent != "" {
		spec["remediationAction"] = string(parent)
	}
}
