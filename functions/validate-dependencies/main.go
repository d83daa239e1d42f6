// Command validate-dependencies is a KRM function that checks the policy-template
// dependencies (spec.dependencies and extraDependencies) of the Policies in a
// package before they reach a hub: cycles, self-dependencies, invalid fields and
// dependencies on objects the package does not hold. It never changes an item.
// README.md documents its use; the algorithm is package shared/dependency.
package main

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

//go:embed README.md
var readme string

// configKind is the kind of this function's functionConfig.
const configKind = "ValidateDependencies"

var validateDependencies = krm.Function{Name: "validate-dependencies", Help: readme, Process: validate, Reads: []schema.GroupKind{
	{Group: policyv1.GroupVersion.Group, Kind: "Policy"},
	{Group: policyv1beta1.GroupVersion.Group, Kind: "PolicySet"},
}}

func main() { validateDependencies.Main() }

// Config is the functionConfig (apiVersion fn.fleetpolicy.io/v1alpha1, kind
// ValidateDependencies).
type Config struct {
	// External lists the dependency targets that live outside the package, so
	// that depending on them is not worth a warning.
	External []External `json:"external,omitempty"`
}

// External names a dependency target as a dependency would, without apiVersion:
// a Policy by name (in the depending policy's namespace unless namespace is
// set) or by its replicated name "<namespace>.<name>".
type External struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

func validate(rl *fn.ResourceList) error {
	var cfg Config
	if err := krm.DecodeConfig(rl.FunctionConfig, configKind, &cfg); err != nil {
		return err
	}
	var errs field.ErrorList
	for i, e := range cfg.External {
		if e.Kind == "" || e.Name == "" {
			errs = append(errs, field.Required(field.NewPath("external").Index(i), "kind and name are required"))
		}
	}
	if len(errs) > 0 {
		return krm.ConfigError(rl.FunctionConfig, errs)
	}

	var (
		policies []*policyv1.Policy
		sets     []*policyv1beta1.PolicySet
		items    = map[types.NamespacedName]*fn.KubeObject{} // Policy -> its item, for results
		// templated are the dependencies holding a template, by Policy and
		// field (spec.dependencies[i]): reported once, and left out of what
		// the graph says of them.
		templated = map[types.NamespacedName]map[string]bool{}
	)
	for _, item := range rl.Items {
		if item.IsLocalConfig() {
			continue
		}
		gk := item.GroupKind()
		switch {
		case gk.Group == policyv1.GroupVersion.Group && gk.Kind == "Policy":
			p := &policyv1.Policy{}
			if err := krm.Decode(item, p); err != nil {
				rl.Results = append(rl.Results, krm.Unreadable(item, err))
				continue
			}
			policies = append(policies, p)
			key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
			if _, dup := items[key]; !dup {
				items[key] = item
			}
			for _, d := range templatedDependencies(p) {
				if templated[key] == nil {
					templated[key] = map[string]bool{}
				}
				templated[key][d.dependency] = true
				rl.Results = append(rl.Results, krm.ObjectResult(item, fn.Error, d.field.Path, fmt.Sprintf(
					"is templated, but OCM resolves templates only inside policy-templates[].objectDefinition: "+
						"the dependency would wait for an object named literally %q, which cannot exist, "+
						"and the templates would stay Pending", d.value)))
			}
		case gk.Group == policyv1beta1.GroupVersion.Group && gk.Kind == "PolicySet":
			set := &policyv1beta1.PolicySet{}
			if err := krm.Decode(item, set); err != nil {
				rl.Results = append(rl.Results, krm.Unreadable(item, err))
				continue
			}
			sets = append(sets, set)
		}
	}

	g := dependency.Build(policies, sets)
	isTemplated := func(policy types.NamespacedName, field string) bool {
		for dep := range templated[policy] {
			if field == dep || strings.HasPrefix(field, dep+".") {
				return true
			}
		}
		return false
	}
	for _, issue := range g.Issues() {
		if isTemplated(issue.Policy, issue.Problem.Field) {
			continue
		}
		rl.Results = append(rl.Results, krm.FieldResult(items[issue.Policy], fn.Error, issue.Problem))
	}
	for _, c := range g.Cycles() {
		declared := c.Declared()
		if isTemplated(declared.Policy, declared.Field.String()) {
			continue
		}
		rl.Results = append(rl.Results, krm.ObjectResult(items[declared.Policy], fn.Error, declared.Field.String(),
			"dependency cycle, each waits for the next: "+c.Path()))
	}
	for _, e := range g.Unresolved() {
		if isExternal(e, cfg.External) || isTemplated(e.Policy, e.Field.String()) {
			continue
		}
		waitsFor := e.To.String()
		if e.Compliance != "" {
			waitsFor += " to be " + string(e.Compliance)
		}
		rl.Results = append(rl.Results, krm.ObjectResult(items[e.Policy], fn.Warning, e.Field.String(), fmt.Sprintf(
			"waits for %s, which is not in the package; if it is managed elsewhere, list it under external in the %s functionConfig",
			waitsFor, configKind)))
	}
	if order, ok := g.ApplyOrder(); ok && len(order) > 0 {
		names := make([]string, len(order))
		for i, ref := range order {
			names[i] = ref.String()
		}
		rl.Results = append(rl.Results, &fn.Result{Severity: fn.Info,
			Message: "apply order, each after what it waits for: " + strings.Join(names, ", ")})
	}
	return nil
}

func isExternal(e dependency.Edge, external []External) bool {
	for _, x := range external {
		if e.To.Names(x.Kind, x.Namespace, x.Name, e.Policy.Namespace) {
			return true
		}
	}
	return false
}

// templatedDependency is a templated field of a dependency.
type templatedDependency struct {
	// dependency is the dependency's path, e.g. spec.dependencies[0].
	dependency string
	field      templates.TemplatedField
	value      string
}

// templatedDependencies returns the templated fields of p's dependencies
// (spec.dependencies and spec.policy-templates[].extraDependencies), in order.
func templatedDependencies(p *policyv1.Policy) []templatedDependency {
	var out []templatedDependency
	check := func(path string, d policyv1.PolicyDependency) {
		for _, f := range []struct{ key, value string }{
			{"apiVersion", d.APIVersion}, {"kind", d.Kind}, {"name", d.Name},
			{"namespace", d.Namespace}, {"compliance", string(d.Compliance)},
		} {
			for _, tf := range templates.TemplatedFields(f.value, templates.FieldPath(path, f.key)) {
				out = append(out, templatedDependency{dependency: path, field: tf, value: f.value})
			}
		}
	}
	for i, d := range p.Spec.Dependencies {
		check(fmt.Sprintf("spec.dependencies[%d]", i), d)
	}
	for i, t := range p.Spec.PolicyTemplates {
		if t == nil {
			continue
		}
		for j, d := range t.ExtraDependencies {
			check(fmt.Sprintf("spec.policy-templates[%d].extraDependencies[%d]", i, j), d)
		}
	}
	return out
}
