// Command plan-rollout is a KRM function that precomputes, for every Policy of a
// package, the waves in which its enforcement will be rolled out over its
// clusters (its spec.rolloutStrategy and the selective enforcement of its
// PlacementBindings' overrides), and writes them as one RolloutPlan per
// Policy beside the input, which it leaves unchanged. The clusters come from
// PlacementDecisions or PlacementRules exported from a hub, or are scheduled
// offline from ManagedClusters. README.md documents its use; the algorithms are
// packages shared/binding, shared/scheduling and shared/rollout.
package main

import (
	_ "embed"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

//go:embed README.md
var readme string

// configKind is the kind of this function's functionConfig.
const configKind = "PlanRollout"

var planRollout = krm.Function{Name: "plan-rollout", Help: readme, Process: func(rl *fn.ResourceList) error {
	return process(rl, time.Now())
}, Reads: inputKinds}

func main() { planRollout.Main() }

// Config is the functionConfig (apiVersion fn.fleetpolicy.io/v1alpha1, kind
// PlanRollout).
type Config struct {
	// Policies limits the plans written to these Policies, each "name" (in any
	// namespace) or "namespace/name". Empty: every Policy.
	Policies []string `json:"policies,omitempty"`
}

// process plans the rollout of every selected Policy of rl; now is the time
// tolerationSeconds are measured against when placements are scheduled offline.
func process(rl *fn.ResourceList, now time.Time) error {
	var cfg Config
	if err := krm.DecodeConfig(rl.FunctionConfig, configKind, &cfg); err != nil {
		return err
	}
	if errs := krm.CheckObjectNames(field.NewPath("policies"), cfg.Policies); len(errs) > 0 {
		return krm.ConfigError(rl.FunctionConfig, errs)
	}

	in := read(rl)
	selected, errs := in.selectPolicies(cfg.Policies)
	if len(errs) > 0 {
		return krm.ConfigError(rl.FunctionConfig, errs)
	}
	in.checkBindings(selected)
	p := planner{in: in, now: now, decisions: map[placementKey]*placementClusters{}}
	plans := map[objectKey]*fn.KubeObject{}
	var order []objectKey
	for _, policy := range selected {
		obj, ok := p.plan(policy)
		if !ok {
			continue
		}
		key := objectKey{policy.obj.Namespace, policy.obj.Name}
		plans[key] = obj
		order = append(order, key)
	}
	// A failed run changes nothing: no half-written set of plans, and kpt shows
	// the errors instead of refusing plans it cannot place.
	if in.results.ExitCode() == 0 {
		rl.Items = in.writePlans(rl.Items, plans, order)
	}
	rl.Results = append(rl.Results, in.results...)
	return nil
}
