package main

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The plugin's one parameter, remediation-action, as Argo CD passes a string
// parameter: PARAM_ and its name upper-cased, every character outside
// [A-Z0-9_] turned into _.
const remediationActionVar = "PARAM_REMEDIATION_ACTION"

// paramVar matches the name of a variable that carries a parameter.
var paramVar = regexp.MustCompile(`^PARAM_[A-Z0-9_]*$`)

// remediationActions are the values remediation-action accepts.
var remediationActions = []string{"inform", "Inform", "enforce", "Enforce"}

// initDecision is what init does in the environment environ (KEY=VALUE
// entries): it returns the arguments of the `kustomize edit` to run on the
// app's kustomization.yaml, none when there is nothing to change, or the
// error that refuses the request.
//
//   - Any variable named PARAM_[A-Z0-9_]* other than PARAM_REMEDIATION_ACTION
//     is a parameter the plugin does not announce, or remediation-action given
//     as an array or a map (PARAM_REMEDIATION_ACTION_0, ..._KEY): refused,
//     naming every such variable in the order of the environment.
//   - PARAM_REMEDIATION_ACTION unset or empty: nothing (Argo CD never sends
//     the announced default; unset keeps the repository's values).
//   - inform, Inform, enforce or Enforce: a JSON patch of every Policy
//     (policy.open-cluster-management.io/v1) that adds
//     /spec/remediationAction with that value. Anything else is refused,
//     quoted as given.
//
// Other variables, ARGOCD_ENV_* (the Application's plugin env, which Argo CD
// prefixes so that it can never set PARAM_*) and ARGOCD_APP_PARAMETERS
// included, are not read.
func initDecision(environ []string) (kustomizeEdit []string, err error) {
	var unknown []string
	action, seen := "", false
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
		case name == remediationActionVar:
			if !seen { // the first, as getenv reads it
				action, seen = value, true
			}
		case paramVar.MatchString(name):
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, errors.New("unknown parameter " + strings.Join(unknown, " ") + " - the only parameter is remediation-action, a string")
	}
	if action == "" {
		return nil, nil
	}
	if !slices.Contains(remediationActions, action) {
		return nil, errors.New(`parameter remediation-action: "` + action + `" is neither inform nor enforce`)
	}
	// action is one of remediationActions: nothing in it needs quoting.
	return []string{"edit", "add", "patch", "--group", "policy.open-cluster-management.io", "--version", "v1", "--kind", "Policy",
		"--patch", `[{"op": "add", "path": "/spec/remediationAction", "value": "` + action + `"}]`}, nil
}

// initApp is the init command: initDecision, then the kustomize edit it
// decided, if any, with kustomize's stdout sent to stderr (init's output is
// never manifests, and nothing but messages belongs there).
func initApp(environ []string) error {
	edit, err := initDecision(environ)
	if err != nil || edit == nil {
		return err
	}
	return kustomize(os.Stderr, edit...)
}
