package main

import (
	"context"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// load compiles the placement policies of in into an evaluator, reporting on
// rl each policy that does not compile; compiled is false when any does not.
func load(ctx context.Context, rl *fn.ResourceList, in *inputs) (engine *placement.Evaluator, compiled bool) {
	engine = placement.New()
	compiled = true
	for _, status := range engine.Load(ctx, in.configMaps) {
		for _, err := range status.Errors {
			compiled = false
			rl.Results = append(rl.Results, policyResult(in.sources[status.ConfigMap], err))
		}
	}
	return engine, compiled
}

// decideAndApply decides every governed item and applies the verdicts in
// item order, appending their results to rl.
//
// Deciding only reads an item and applying its verdict writes it, so the
// items are decided all at once, on every core, and the verdicts applied
// after in item order; unless an item holds an alias, which may reach into
// an item before it: deciding and applying each in turn, as ever, it sees
// that item's annotations applied.
func decideAndApply(ctx context.Context, rl *fn.ResourceList, engine *placement.Evaluator, governed []*fn.KubeObject, explain bool, timeout time.Duration) error {
	var verdicts []verdict
	decideFirst := !slices.ContainsFunc(governed, krm.HoldsAlias)
	if decideFirst {
		verdicts = decideAll(ctx, engine, governed, explain, timeout)
	}
	for i, item := range governed {
		var v verdict
		if decideFirst {
			v = verdicts[i]
		} else {
			v = decide(ctx, engine, item, explain, timeout)
		}
		if err := v.apply(item); err != nil {
			return err
		}
		rl.Results = append(rl.Results, v.results...)
	}
	return nil
}

// decideAll decides every item on runtime.GOMAXPROCS(0) goroutines, which
// share the Evaluator (its Evaluate and Explain may run concurrently).
func decideAll(ctx context.Context, engine *placement.Evaluator, items []*fn.KubeObject, explain bool, timeout time.Duration) []verdict {
	verdicts := make([]verdict, len(items))
	var (
		next atomic.Int64 // the index of the next item to decide
		wg   sync.WaitGroup
	)
	for range min(goruntime.GOMAXPROCS(0), len(items)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(items); i = int(next.Add(1) - 1) {
				verdicts[i] = decide(ctx, engine, items[i], explain, timeout)
			}
		})
	}
	wg.Wait()
	return verdicts
}

// verdict is what the placement policies decide for one governed item: the
// results to report and, unless explaining or denied, the annotations to set
// and to remove as the hub applies them (placement.Result.Apply): merged in,
// and those a policy set before and no longer sets removed.
type verdict struct {
	results     fn.Results
	annotations map[string]string // the item's annotations once applied
	set         []string          // sorted
	removed     []string          // sorted
}

// decide evaluates the policies on one governed item. It only reads the item.
func decide(ctx context.Context, engine *placement.Evaluator, item *fn.KubeObject, explain bool, timeout time.Duration) verdict {
	object, err := krm.Object(item)
	if err != nil {
		return verdict{results: fn.Results{krm.Unreadable(item, err)}}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	evaluate := engine.Evaluate
	if explain {
		evaluate = engine.Explain
	}
	result, err := evaluate(ctx, object)
	if err != nil {
		return verdict{results: fn.Results{krm.ObjectResult(item, fn.Error, "", "placement cannot be decided: "+err.Error())}}
	}
	var v verdict
	for _, m := range result.Errors {
		v.results = append(v.results, krm.ObjectResult(item, fn.Error, "", "denied by placement policy "+m.String()))
	}
	current := item.GetAnnotations()
	annotations, _ := result.Apply(current)
	set, removed := krm.ChangedKeys(current, annotations) // what applying the result sets and removes
	if explain {
		for _, k := range set {
			v.results = append(v.results, krm.ObjectResult(item, fn.Info, "metadata.annotations",
				fmt.Sprintf("would set annotation %s: %q", k, annotations[k])))
		}
		for _, k := range removed {
			v.results = append(v.results, krm.ObjectResult(item, fn.Info, "metadata.annotations",
				"would remove annotation "+k+", which a placement policy set and no longer sets"))
		}
		for _, d := range result.Clusters {
			v.results = append(v.results, decisionResult(item, d))
		}
		return v
	}
	if result.Denied() {
		return v
	}
	v.annotations, v.set, v.removed = annotations, set, removed
	return v
}

// apply sets and removes the annotations of the verdict on the item.
func (v verdict) apply(item *fn.KubeObject) error {
	for _, k := range v.set {
		if err := item.SetAnnotation(k, v.annotations[k]); err != nil {
			return fmt.Errorf("%s %s: setting annotation %s: %w", item.GetKind(), item.GetName(), k, err)
		}
	}
	for _, k := range v.removed {
		if err := item.RemoveAnnotation(k); err != nil {
			return fmt.Errorf("%s %s: removing annotation %s: %w", item.GetKind(), item.GetName(), k, err)
		}
	}
	if len(v.removed) > 0 && len(item.GetAnnotations()) == 0 {
		if _, err := item.RemoveNestedField("metadata", "annotations"); err != nil {
			return fmt.Errorf("%s %s: removing the empty annotations: %w", item.GetKind(), item.GetName(), err)
		}
	}
	return nil
}

// decisionResult is the info result explaining the decision for one cluster.
func decisionResult(item *fn.KubeObject, d placement.Decision) *fn.Result {
	decision := "excluded"
	if d.Allowed {
		decision = "allowed"
	}
	reasons := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		reasons[i] = r.String()
	}
	r := krm.ObjectResult(item, fn.Info, "", fmt.Sprintf("cluster %s: %s: %s", d.Cluster, decision, strings.Join(reasons, "; ")))
	r.Tags = map[string]string{"cluster": d.Cluster, "decision": decision}
	return r
}

// policyResult reports a placement policy that does not compile, on its
// ConfigMap (an item of the package, or in a file).
func policyResult(src policySource, err *placement.PolicyError) *fn.Result {
	field := err.Field
	if err.Policy.Key != "" {
		if field == "" {
			field = "data"
		}
		field += "[" + err.Policy.Key + "]"
	}
	msg := "placement policy does not compile: " + err.Err.Error()
	if src.item != nil {
		return krm.ObjectResult(src.item, fn.Error, field, msg)
	}
	return &fn.Result{Severity: fn.Error, Message: msg, Field: &fn.Field{Path: field}, File: &fn.File{Path: src.file},
		ResourceRef: &fn.ResourceRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: placement.Namespace, Name: err.Policy.ConfigMap}}
}
