// Command expand-operator-policy is a KRM function that expands the
// OperatorPolicies of a package (one policy installs and governs one OLM
// operator) for one of two deployments: in olm mode each is replaced by the OLM
// objects the spoke operator-policy controller would create for it (for
// clusters managed by plain GitOps), in policy mode each is wrapped in a root
// Policy, with a PlacementBinding and Placement when the functionConfig names
// one (for a hub).
// README.md documents its use; the OperatorPolicy logic is package
// shared/operatorpolicy.
package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

//go:embed README.md
var readme string

// configKind is the kind of this function's functionConfig.
const configKind = "ExpandOperatorPolicy"

var expandOperatorPolicy = krm.Function{Name: "expand-operator-policy", Help: readme, Process: expand}

func main() { expandOperatorPolicy.Main() }

// The modes of the function.
const (
	ModeOLM    = "olm"
	ModePolicy = "policy"
)

// Config is the functionConfig (apiVersion fn.fleetpolicy.io/v1alpha1, kind
// ExpandOperatorPolicy).
type Config struct {
	// Mode is olm (the default) or policy.
	Mode string `json:"mode,omitempty"`
	// Placement, in policy mode, is a Placement the function creates in each
	// namespace of the Policies and binds them to.
	Placement *Placement `json:"placement,omitempty"`
	// PlacementRef, in policy mode, names a Placement or PlacementRule that
	// exists elsewhere (in each namespace of the Policies) to bind them to.
	PlacementRef *PlacementRef `json:"placementRef,omitempty"`
}

// Placement is the Placement the function creates in policy mode. With
// neither clusterSets nor labelSelector it selects every cluster of the
// ManagedClusterSets bound to its namespace.
type Placement struct {
	Name string `json:"name"`
	// ClusterSets are the ManagedClusterSets to select from; none means every
	// set bound to the namespace.
	ClusterSets []string `json:"clusterSets,omitempty"`
	// LabelSelector selects clusters by their labels.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// PlacementRef names the Placement or PlacementRule to bind to in policy mode.
type PlacementRef struct {
	Name string `json:"name"`
	// Kind is Placement (the default) or PlacementRule.
	Kind string `json:"kind,omitempty"`
}

// readConfig decodes and checks the functionConfig; errors name the config and
// the field.
func readConfig(config *fn.KubeObject) (Config, error) {
	var cfg Config
	if err := krm.DecodeConfig(config, configKind, &cfg); err != nil {
		return cfg, err
	}
	var errs field.ErrorList
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeOLM
	case ModeOLM, ModePolicy:
	default:
		errs = append(errs, unsupported(field.NewPath("mode"), cfg.Mode, ModeOLM, ModePolicy))
	}
	if cfg.Mode == ModeOLM {
		if cfg.Placement != nil {
			errs = append(errs, field.Forbidden(field.NewPath("placement"), "is only used in mode "+ModePolicy))
		}
		if cfg.PlacementRef != nil {
			errs = append(errs, field.Forbidden(field.NewPath("placementRef"), "is only used in mode "+ModePolicy))
		}
	}
	if cfg.Placement != nil && cfg.PlacementRef != nil {
		errs = append(errs, field.Forbidden(field.NewPath("placement"), "cannot be combined with placementRef: give one"))
	}
	if p := cfg.Placement; p != nil {
		path := field.NewPath("placement")
		errs = append(errs, checkName(path.Child("name"), p.Name)...)
		for i, set := range p.ClusterSets {
			errs = append(errs, checkName(path.Child("clusterSets").Index(i), set)...)
		}
		if p.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(p.LabelSelector); err != nil {
				errs = append(errs, field.Invalid(path.Child("labelSelector"), p.LabelSelector, err.Error()))
			}
		}
	}
	if r := cfg.PlacementRef; r != nil {
		path := field.NewPath("placementRef")
		errs = append(errs, checkName(path.Child("name"), r.Name)...)
		switch r.Kind {
		case "":
			r.Kind = binding.KindPlacement
		case binding.KindPlacement, binding.KindPlacementRule:
		default:
			errs = append(errs, unsupported(path.Child("kind"), r.Kind, binding.KindPlacement, binding.KindPlacementRule))
		}
	}
	return cfg, krm.ConfigError(config, errs)
}

// unsupported is the error of a value that is neither of the two supported.
func unsupported(path *field.Path, value, one, other string) *field.Error {
	e := field.NotSupported(path, value, []string{one, other})
	e.Detail = fmt.Sprintf("unsupported value %q: must be %s or %s", value, one, other)
	return e
}

// checkName checks the name of an object the function creates, at path.
func checkName(path *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "is required")}
	}
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return field.ErrorList{field.Invalid(path, name, fmt.Sprintf("invalid value %q: %s", name, strings.Join(problems, "; ")))}
	}
	return nil
}

// source is one OperatorPolicy of the package.
type source struct {
	item   *fn.KubeObject
	op     *v1beta1.OperatorPolicy
	policy operatorpolicy.Policy
	// notes are the results of reading it that are not errors (info, mode
	// policy): its templated fields, and the fields the managed cluster
	// defaults.
	notes fn.Results
	// templatedAction: spec.remediationAction is templated.
	templatedAction bool
}

// expand is the function's Process. On any error result it leaves every item
// as it came; otherwise each OperatorPolicy item is replaced, in place, by what
// its mode makes of it.
func expand(rl *fn.ResourceList) error {
	cfg, err := readConfig(rl.FunctionConfig)
	if err != nil {
		return err
	}
	pkg := newPackage(rl.Items)
	var sources []*source
	unreadable := map[*fn.KubeObject]fn.Results{}
	for _, item := range pkg.owned {
		if s, results := read(item, cfg.Mode); len(results) > 0 {
			unreadable[item] = results
		} else {
			sources = append(sources, s)
		}
	}

	out := newOutput(pkg, sources)
	switch cfg.Mode {
	case ModeOLM:
		expandOLM(out, sources)
	case ModePolicy:
		wrapInPolicies(out, sources, cfg)
	}
	maps.Copy(out.results, unreadable)
	rl.Results = append(rl.Results, out.allResults()...)
	if rl.Results.ExitCode() != 0 {
		// Nothing is expanded: leave out the results that say what would have been.
		rl.Results = slices.DeleteFunc(rl.Results, func(r *fn.Result) bool { return r.Severity == fn.Info })
		return nil
	}
	rl.Items = pkg.replace(out.objects)
	return nil
}

// read decodes and normalises one OperatorPolicy item and checks what the mode
// needs of it; every problem is a result naming the item and the field.
// Templated fields ({{ ... }}, {{hub ... hub}}) are left out of what is
// decoded and checked: mode policy passes them through to the hub, mode olm
// cannot (see templatedResults).
func read(item *fn.KubeObject, mode string) (*source, fn.Results) {
	if item.GetAPIVersion() != v1beta1.GroupVersion.String() {
		return nil, fn.Results{krm.FieldResult(item, fn.Error,
			field.NotSupported(field.NewPath("apiVersion"), item.GetAPIVersion(), []string{v1beta1.GroupVersion.String()}))}
	}
	op := &v1beta1.OperatorPolicy{}
	templated, err := decodeUntemplated(item, op)
	if err != nil {
		return nil, fn.Results{krm.Unreadable(item, err)}
	}
	if op.Name == "" && len(templated) == 0 {
		return nil, fn.Results{krm.FieldResult(item, fn.Error, field.Required(field.NewPath("metadata", "name"), ""))}
	}
	var results fn.Results
	p, err := operatorpolicy.Normalize(op)
	results = append(results, krm.ErrorResults(item, fn.Error, err)...)
	switch mode {
	case ModeOLM:
		results = append(results, checkForOLM(item, op)...)
	case ModePolicy:
		if op.Spec.Subscription.Namespace == "" {
			results = append(results, krm.ObjectResult(item, fn.Info, "spec.subscription.namespace",
				"is unset: passed through unset; the managed cluster defaults it as OCM does (the namespace of the "+
					"Subscription it already relates, else the PackageManifest's suggested namespace, else its "+
					"--operator-policy-default-namespace), not to the namespace the template lands in"))
		}
	}
	// What a template decides is not checked here: the template's resolver
	// (the hub, the managed cluster) checks it once resolved.
	results = slices.DeleteFunc(results, func(r *fn.Result) bool {
		return r.Field != nil && slices.ContainsFunc(templated, func(f templates.TemplatedField) bool { return f.Under(r.Field.Path) })
	})
	if results = append(results, templatedResults(item, templated, mode)...); results.ExitCode() != 0 {
		return nil, slices.DeleteFunc(results, func(r *fn.Result) bool { return r.Severity == fn.Info })
	}
	s := &source{item: item, op: op, policy: p, notes: results}
	s.templatedAction = slices.ContainsFunc(templated, func(f templates.TemplatedField) bool { return f.Under("spec.remediationAction") })
	return s, nil
}

// decodeUntemplated decodes item into op without its templated fields, and
// returns them.
func decodeUntemplated(item *fn.KubeObject, op *v1beta1.OperatorPolicy) ([]templates.TemplatedField, error) {
	obj, err := krm.Object(item)
	if err != nil {
		return nil, err
	}
	templated := templates.TemplatedFields(obj, "")
	if len(templated) == 0 {
		return nil, krm.Decode(item, op)
	}
	raw, err := json.Marshal(templates.WithoutTemplated(obj))
	if err != nil {
		return nil, err
	}
	node, err := krm.NodeFromJSON(raw)
	if err != nil {
		return nil, err
	}
	return templated, krm.Decode(fn.MoveToKubeObject(yaml.NewRNode(node)), op)
}

// templatedResults are the results of an OperatorPolicy's templated fields:
// errors for those the function needs as written (the name, the namespace)
// and, in mode olm, for every one (OLM objects applied by GitOps have nothing
// to resolve them); in mode policy, an info result each, since the Policy
// delivers them to OCM as written.
func templatedResults(item *fn.KubeObject, templated []templates.TemplatedField, mode string) fn.Results {
	var results fn.Results
	for _, f := range templated {
		severity, message := fn.Info, "is templated: passed through as written in the Policy's template, resolved by "+f.Resolver()
		switch {
		case f.Under("metadata.name") || f.Under("metadata.namespace"):
			severity, message = fn.Error, "is templated, but the function names the objects it makes after the OperatorPolicy's name and namespace: write them as values"
		case strings.HasPrefix(f.Path, "metadata.labels") || strings.HasPrefix(f.Path, "metadata.annotations"):
			continue // not read by the function, and kept in the template as written
		case mode == ModeOLM:
			severity, message = fn.Error, "is templated, resolved by "+f.Resolver()+" under OCM, but mode olm writes OLM objects "+
				"that GitOps applies and nothing resolves: use mode policy, or write the value"
		case f.Under("spec.remediationAction"):
			message += "; the Policy sets no remediationAction, so that the template's decides"
		}
		results = append(results, krm.ObjectResult(item, severity, f.Path, message))
	}
	return results
}
