package dependency

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Issue is a problem with one field of a Policy: the field error (its Field is
// the path, e.g. spec.dependencies[0].compliance) and the policy that holds
// the field.
type Issue struct {
	// Policy is the namespace and name of the policy that holds the field.
	Policy types.NamespacedName
	// Problem is what is wrong, and in which field of the policy.
	Problem *field.Error
}

// Error renders the issue as "Policy <ns>/<name>: <field>: <error body>", so
// that an Issue however printed (%v, %s, %q, wrapped) names its policy.
func (i Issue) Error() string {
	return fmt.Sprintf("Policy %s: %s", policyName(i.Policy), i.Problem.Error())
}

// String is Error.
func (i Issue) String() string { return i.Error() }

// Requirement is one canonical dependency of a template: the object it waits
// for and the compliance it waits for.
type Requirement struct {
	Target     Ref
	Compliance policyv1.ComplianceState
	// Field is where the dependency is declared, e.g. spec.dependencies[0] or
	// spec.policy-templates[1].extraDependencies[0]. A PolicySet dependency yields
	// one Requirement per member, all with the set dependency's field.
	Field *field.Path
}

// Requirements returns what template number template of p waits for: the union
// of spec.dependencies and the template's extraDependencies, canonicalised (see
// Canonicalize) and without duplicates, in declaration order. A template number
// out of range, or a null template, yields the policy's dependencies only.
// A dependency on one of the policy group's kinds written without apiVersion (a
// spelling fleetpolicy accepts and OCM does not) is read as the policy group's; other dependencies without
// apiVersion, and those without kind or name, are left out (Validate reports
// them). The
// same target asked for in two compliance states is an Issue; the first
// declaration, policy-level ones first, is kept.
func Requirements(p *policyv1.Policy, template int, sets PolicySets) ([]Requirement, []Issue) {
	if p == nil {
		return nil, nil
	}
	reqs, issues := addRequirements(nil, policyDeclarations(p), p, sets)
	reqs, more := addRequirements(reqs, templateDeclarations(p, template), p, sets)
	return reqs, append(issues, more...)
}

// declaration is one dependency as written, with the path of its field.
type declaration struct {
	dep  policyv1.PolicyDependency
	path *field.Path
}

// fieldDependencies is the path of a policy's own dependencies, which apply
// to every template.
var fieldDependencies = field.NewPath("spec", "dependencies")

func policyDeclarations(p *policyv1.Policy) []declaration {
	decls := make([]declaration, 0, len(p.Spec.Dependencies))
	for i, dep := range p.Spec.Dependencies {
		decls = append(decls, declaration{dep: dep, path: fieldDependencies.Index(i)})
	}
	return decls
}

func templateDeclarations(p *policyv1.Policy, template int) []declaration {
	if template < 0 || template >= len(p.Spec.PolicyTemplates) || p.Spec.PolicyTemplates[template] == nil {
		return nil
	}
	extra := p.Spec.PolicyTemplates[template].ExtraDependencies
	decls := make([]declaration, 0, len(extra))
	for i, dep := range extra {
		decls = append(decls, declaration{
			dep:  dep,
			path: field.NewPath("spec", "policy-templates").Index(template).Child("extraDependencies").Index(i),
		})
	}
	return decls
}

// addRequirements appends the canonical requirements of decls to a copy of reqs,
// skipping duplicates and reporting conflicting compliance states.
func addRequirements(reqs []Requirement, decls []declaration, p *policyv1.Policy, sets PolicySets) ([]Requirement, []Issue) {
	reqs = slices.Clip(reqs)
	var issues []Issue
	for _, decl := range decls {
		written := withPolicyGroupAPIVersion(decl.dep)
		if written.APIVersion == "" || written.Kind == "" || written.Name == "" {
			continue
		}
		for _, dep := range canonicalize(written, p.Namespace, sets) {
			req := Requirement{Target: TargetOf(dep), Compliance: dep.Compliance, Field: decl.path}
			i := slices.IndexFunc(reqs, func(r Requirement) bool { return r.Target == req.Target })
			switch {
			case i < 0:
				reqs = append(reqs, req)
			case reqs[i].Compliance != req.Compliance:
				issues = append(issues, Issue{Policy: policyKey(p), Problem: field.Invalid(decl.path.Child("compliance"), req.Compliance,
					fmt.Sprintf("dependency on %s is declared with compliance %s at %s, which applies",
						req.Target, reqs[i].Compliance, reqs[i].Field))})
			}
		}
	}
	return reqs, issues
}

// validCompliance lists the states a dependency may wait for.
var validCompliance = []policyv1.ComplianceState{policyv1.Compliant, policyv1.NonCompliant, policyv1.Pending}

// kindsWithoutNamespace are the dependency kinds whose namespace must be empty
// (the Policy CRD rejects one).
var kindsWithoutNamespace = []string{"ConfigurationPolicy", "CertificatePolicy"}

// Validate checks every dependency of p as the Policy CRD does: apiVersion (except
// for the policy group's kinds, see Requirements), kind and name are required, compliance is one of Compliant, NonCompliant and
// Pending, and ConfigurationPolicy and CertificatePolicy dependencies have no
// namespace. Issues come in declaration order.
func Validate(p *policyv1.Policy) []Issue {
	if p == nil {
		return nil
	}
	decls := policyDeclarations(p)
	for t := range p.Spec.PolicyTemplates {
		decls = append(decls, templateDeclarations(p, t)...)
	}
	var issues []Issue
	report := func(err *field.Error) {
		issues = append(issues, Issue{Policy: policyKey(p), Problem: err})
	}
	for _, decl := range decls {
		dep := withPolicyGroupAPIVersion(decl.dep)
		if dep.APIVersion == "" {
			report(field.Required(decl.path.Child("apiVersion"), "it may be left out only for "+strings.Join(kindsWithoutAPIVersion, ", ")))
		}
		if dep.Kind == "" {
			report(field.Required(decl.path.Child("kind"), ""))
		}
		if dep.Name == "" {
			report(field.Required(decl.path.Child("name"), ""))
		}
		if !slices.Contains(validCompliance, dep.Compliance) {
			report(field.NotSupported(decl.path.Child("compliance"), dep.Compliance, validCompliance))
		}
		if dep.Namespace != "" && slices.Contains(kindsWithoutNamespace, dep.Kind) {
			report(field.Invalid(decl.path.Child("namespace"), dep.Namespace, fmt.Sprintf(
				"must be empty for a %s dependency: the managed cluster looks it up in its own namespace", dep.Kind)))
		}
	}
	return issues
}

func policyKey(p *policyv1.Policy) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}

func policyName(key types.NamespacedName) string {
	if key.Namespace == "" {
		return key.Name
	}
	return key.Namespace + "/" + key.Name
}
