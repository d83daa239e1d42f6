package main

import (
	"encoding/json"
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// checkTemplatedActions reports the templated remediationActions of a Policy:
// its own, which OCM never resolves (an error: the Policy CRD takes only
// inform or enforce), and those of its policy templates, which the hub or the
// managed cluster resolve where the plan cannot see them. It returns false
// when the Policy cannot be planned.
func (in *inputs) checkTemplatedActions(policy object[policyv1.Policy]) bool {
	root := policy.obj
	if action := string(root.Spec.RemediationAction); templates.IsTemplated(action) {
		in.results = append(in.results, krm.ObjectResult(policy.item, fn.Error, "spec.remediationAction", fmt.Sprintf(
			"%q is templated, but OCM resolves templates only inside policy-templates[].objectDefinition, "+
				"and a Policy's remediationAction must be inform or enforce", action)))
		return false
	}
	for i, t := range root.Spec.PolicyTemplates {
		if t == nil {
			continue
		}
		var obj struct {
			Spec struct {
				RemediationAction any `json:"remediationAction"`
			} `json:"spec"`
		}
		if json.Unmarshal(t.ObjectDefinition.Raw, &obj) != nil {
			continue // not an object: the hub refuses it, not a rollout matter
		}
		path := fmt.Sprintf("spec.policy-templates[%d].objectDefinition.spec.remediationAction", i)
		for _, f := range templates.TemplatedFields(obj.Spec.RemediationAction, path) {
			var severity fn.Severity
			var message string
			switch {
			case root.Spec.RemediationAction != "":
				severity, message = fn.Info, fmt.Sprintf("is templated; the Policy's spec.remediationAction (%s) replaces it on every cluster",
					root.Spec.RemediationAction)
			case f.Hub:
				severity, message = fn.Warning, "is templated: the hub resolves it for each cluster, so this plan cannot say "+
					"whether the template enforces (the clusters show no remediationAction for it); "+
					"preview-hub-templates shows each cluster's value"
			default:
				severity, message = fn.Error, "holds a managed-cluster template, which OCM never resolves in remediationAction: "+
					"the managed cluster refuses a template whose remediationAction is not inform or enforce; "+
					"use a hub template ({{hub ... hub}}) or set the Policy's spec.remediationAction"
			}
			in.results = append(in.results, krm.ObjectResult(policy.item, severity, f.Path, message))
			if severity == fn.Error {
				return false
			}
		}
	}
	return true
}
