package krm

import (
	"fmt"
	"slices"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// InternalError is what the error result of a panic of Process that no YAML
// alias explains says, after the function's name.
const InternalError = "stopped on an internal error"

// heldBack is an item kept from Process, with its position in the input.
type heldBack struct {
	index int
	item  *fn.KubeObject
}

// processPassingThrough calls Process on the items it reads or that hold no
// alias, then puts the others back in their places.
func (f Function) processPassingThrough(rl *fn.ResourceList) error {
	var held []heldBack
	if f.Reads != nil {
		kept := rl.Items[:0:0]
		for i, item := range rl.Items {
			if !f.reads(item) && HoldsAlias(item) {
				held = append(held, heldBack{index: i, item: item})
				continue
			}
			kept = append(kept, item)
		}
		rl.Items = kept
	}
	err := f.processRecovering(rl)
	for _, h := range held {
		at := min(h.index, len(rl.Items))
		rl.Items = slices.Insert(rl.Items, at, h.item)
	}
	return err
}

// reads reports whether Process reads item: its kind is in Reads, or its
// apiVersion or kind cannot be told without reading an alias.
func (f Function) reads(item *fn.KubeObject) bool {
	if f.Reads == nil {
		return true
	}
	n := Node(item)
	apiVersion, kind := mappingValue(n, "apiVersion"), mappingValue(n, "kind")
	if n.Kind != yaml.MappingNode || apiVersion == nil || kind == nil ||
		apiVersion.Kind != yaml.ScalarNode || kind.Kind != yaml.ScalarNode {
		return true
	}
	return slices.Contains(f.Reads, schema.FromAPIVersionAndKind(apiVersion.Value, kind.Value).GroupKind())
}

// processPanic is a panic of Process, recovered.
type processPanic struct{ value any }

func (p *processPanic) Error() string { return fmt.Sprint(p.value) }

// processRecovering calls f.Process, turning a panic into a *processPanic.
func (f Function) processRecovering(rl *fn.ResourceList) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &processPanic{value: v}
		}
	}()
	return f.Process(rl)
}

// failedList is what Run writes when Process panicked: the items of the input
// as they came in (whatever Process changed before it stopped), and an error
// result for each item of a kind it reads that holds a YAML alias, the input the kpt SDK's
// accessors panic on (kpt-functions-sdk v1.1.0: "unhandled yaml node kind"),
// or, when none does, one for the panic itself.
func (f Function) failedList(input []byte, p *processPanic) *fn.ResourceList {
	rl, err := fn.ParseResourceList(input)
	if err != nil { // it parsed before Process ran
		return &fn.ResourceList{Results: fn.Results{fn.ErrorResult(fmt.Errorf("%s stopped: %v", f.Name, p))}}
	}
	for _, item := range rl.Items {
		if !f.reads(item) {
			continue
		}
		if field, anchor, found := firstAlias(Node(item), ""); found {
			rl.Results = append(rl.Results, ObjectResult(item, fn.Error, field, fmt.Sprintf(
				"is a YAML alias (*%s), which %s cannot read: write the value out in full", anchor, f.Name)))
		}
	}
	if len(rl.Results) == 0 {
		rl.Results = append(rl.Results, fn.ErrorResult(fmt.Errorf("%s %s: %v", f.Name, InternalError, p)))
	}
	return rl
}
