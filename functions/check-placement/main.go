// Command check-placement is a KRM function that runs the placement policies of
// the fleet (ConfigMaps of namespace fleetpolicy-placement) over the root
// Policies and Placements of a package, against an inventory of ManagedClusters,
// as the hub's admission webhook does: it merges the policies' annotations into
// each resource (placement.fleetpolicy.io/clusters among them) and reports the
// resources the policies deny. README.md documents its use; the engine is
// package shared/placement.
//
// Files, by concern: main.go runs the steps in turn; config.go reads and
// checks the functionConfig; inputs.go reads the policies, the inventory and
// the governed items from the package and the files the config names;
// decide.go loads the policies, decides each governed item and applies the
// verdicts.
package main

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

//go:embed README.md
var readme string

const (
	name = "check-placement"
	// configKind is the kind of this function's functionConfig (config.go).
	configKind = "CheckPlacement"
	// explainFlag is the one argument the function takes.
	explainFlag = "--explain"
)

var checkPlacement = krm.Function{Name: name, Help: readme, Process: processExplaining(false),
	Flags: map[string]func(*fn.ResourceList) error{explainFlag: processExplaining(true)},
	Reads: []schema.GroupKind{
		{Kind: "ConfigMap"},
		{Group: clusterv1.GroupName, Kind: "ManagedCluster"},
		{Group: "policy.open-cluster-management.io", Kind: "Policy"},
		{Group: clusterv1.GroupName, Kind: "Placement"},
	}}

func main() { checkPlacement.Main() }

// processExplaining is the function's Process, explaining every decision when
// explain is set.
func processExplaining(explain bool) func(*fn.ResourceList) error {
	return func(rl *fn.ResourceList) error { return process(context.Background(), rl, explain) }
}

// process reads the functionConfig and the inputs, loads the placement
// policies and, when they all compile, decides every governed item and
// applies the verdicts.
func process(ctx context.Context, rl *fn.ResourceList, explain bool) error {
	cfg, timeout, err := readConfig(rl.FunctionConfig, explain)
	if err != nil {
		return err
	}
	in, err := read(rl, cfg)
	if err != nil {
		return err
	}
	engine, compiled := load(ctx, rl, in)
	if !compiled {
		return nil // every evaluation would fail: the error results say why
	}
	if err := engine.SetClusters(ctx, in.clusters); err != nil {
		return fmt.Errorf("the inventory of ManagedClusters: %w", err)
	}
	return decideAndApply(ctx, rl, engine, in.governed, cfg.Explain, timeout)
}
