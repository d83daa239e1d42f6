package configpolicy

import (
	"fmt"
	"strings"
	"text/template"

	sprig "github.com/Masterminds/sprig/v3"
	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// customMessageFuncs are the Sprig functions a custom message may call: those
// OCM's template library allows (all but the ones reading the environment).
var customMessageFuncs = func() template.FuncMap {
	all := sprig.TxtFuncMap()
	funcs := template.FuncMap{}
	for _, name := range gotemplates.AvailableSprigFunctions() {
		funcs[name] = all[name]
	}
	return funcs
}()

// CustomComplianceMessage is the compliance message of a ConfigurationPolicy
// with spec.customMessage, as OCM's config-policy-controller makes it: the
// template for the policy's compliance (Compliant, or NonCompliant for any
// other state) executed over .DefaultMessage and .Policy (the policy, with its
// new status, by JSON field names), prefixed with "<state>; " unless it starts
// so. Without a template for the state it is defaultMessage; a template that
// fails gives defaultMessage followed by the failure.
func CustomComplianceMessage(custom policyv1.CustomMessage, compliant bool, defaultMessage string, policy map[string]any) string {
	text, state := custom.NonCompliant, string(policyv1.NonCompliant)
	if compliant {
		text, state = custom.Compliant, string(policyv1.Compliant)
	}
	if text == "" {
		return defaultMessage
	}
	var out strings.Builder
	tmpl, err := template.New("customMessage").Funcs(customMessageFuncs).Parse(text)
	if err == nil {
		err = tmpl.Execute(&out, map[string]any{"DefaultMessage": defaultMessage, "Policy": policy})
	}
	if err != nil {
		return fmt.Sprintf("%s (failure processing the custom message: %v)", defaultMessage, err)
	}
	msg := out.String()
	if !strings.HasPrefix(msg, state+"; ") {
		msg = state + "; " + msg
	}
	return msg
}

// WithWholeRelatedObjects puts whole[i], when not nil, in place of the
// identifying fields of status.relatedObjects[i].object of policy (a
// ConfigurationPolicy by JSON field names, as CustomComplianceMessage takes
// it), as OCM does for a policy evaluated by watch: a custom message may then
// read any field of the objects it relates to.
func WithWholeRelatedObjects(policy map[string]any, whole []map[string]any) {
	status, _ := policy["status"].(map[string]any)
	related, _ := status["relatedObjects"].([]any)
	for i, obj := range whole {
		if i >= len(related) || obj == nil {
			continue
		}
		if entry, ok := related[i].(map[string]any); ok {
			entry["object"] = obj
		}
	}
}
