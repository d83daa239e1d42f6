// Command check-placement is a KRM function that runs the placement policies of
// the fleet (ConfigMaps of namespace fleetpolicy-placement) over the root
// Policies and Placements of a package, against an inventory of ManagedClusters,
// as the hub's admission webhook does: it merges the policies' annotations into
// each resource (placement.fleetpolicy.io/clusters among them) and reports the
// resources the policies deny. README.md documents its use; the engine is
// package shared/placement.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

//go:embed README.md
var readme string

const (
	name = "check-placement"
	// configKind is the kind of this function's functionConfig.
	configKind = "CheckPlacement"
	// explainFlag is the one argument the function takes.
	explainFlag = "--explain"
	// defaultTimeout bounds the evaluation of one resource.
	defaultTimeout = 10 * time.Second
	// maxFileBytes bounds the size of each file under policies and clusters
	// (64 MiB: some 10,000 ManagedClusters with their status): a larger file,
	// or one without end such as /dev/zero, is refused before it is read whole.
	maxFileBytes = 64 << 20
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

// Config is the functionConfig (apiVersion fn.fleetpolicy.io/v1alpha1, kind
// CheckPlacement).
type Config struct {
	// Policies are files of placement-policy ConfigMaps, read in addition to
	// the package's, relative to the function's working directory.
	Policies []string `json:"policies,omitempty"`
	// Clusters are files of ManagedClusters (or Lists of them, as `kubectl get
	// managedclusters -o yaml` writes), read in addition to the package's.
	Clusters []string `json:"clusters,omitempty"`
	// Explain adds an info result per resource and cluster, and changes no
	// item (as the --explain flag).
	Explain bool `json:"explain,omitempty"`
	// Timeout bounds the evaluation of one resource, e.g. 30s (default 10s).
	Timeout string `json:"timeout,omitempty"`
}

// policySource is a placement-policy ConfigMap and where it came from: an item
// of the package, or a file.
type policySource struct {
	item *fn.KubeObject
	file string
}

func process(ctx context.Context, rl *fn.ResourceList, explain bool) error {
	cfg := Config{Explain: explain}
	if err := krm.DecodeConfig(rl.FunctionConfig, configKind, &cfg); err != nil {
		return err
	}
	timeout := defaultTimeout
	if cfg.Timeout != "" {
		d, err := time.ParseDuration(cfg.Timeout)
		if err != nil || d <= 0 {
			return configError(rl, "timeout", fmt.Errorf("%q is not a positive duration such as 30s", cfg.Timeout))
		}
		timeout = d
	}

	var (
		configMaps []corev1.ConfigMap
		sources    = map[string]policySource{} // by ConfigMap name
		clusters   []placement.Cluster
		governed   []*fn.KubeObject
	)
	addPolicy := func(cm corev1.ConfigMap, src policySource) error {
		if _, dup := sources[cm.Name]; dup {
			return fmt.Errorf("placement policy ConfigMap %s/%s is given twice", cm.Namespace, cm.Name)
		}
		sources[cm.Name] = src
		configMaps = append(configMaps, cm)
		return nil
	}
	for _, item := range rl.Items {
		gk := item.GroupKind()
		switch {
		case gk.Group == "" && gk.Kind == "ConfigMap":
			var cm corev1.ConfigMap
			if err := krm.Decode(item, &cm); err != nil {
				rl.Results = append(rl.Results, krm.Unreadable(item, err))
				continue
			}
			if _, labelled := cm.Labels[placement.LanguageLabel]; !labelled {
				continue
			}
			if !placement.IsPolicy(&cm) {
				rl.Results = append(rl.Results, krm.ObjectResult(item, fn.Warning, "metadata.namespace",
					"labelled "+placement.LanguageLabel+" but not in namespace "+placement.Namespace+": not a placement policy"))
				continue
			}
			if err := addPolicy(cm, policySource{item: item}); err != nil {
				return err
			}
		case gk.Group == clusterv1.GroupName && gk.Kind == "ManagedCluster":
			var mc clusterv1.ManagedCluster
			if err := krm.Decode(item, &mc); err != nil {
				rl.Results = append(rl.Results, krm.Unreadable(item, err))
				continue
			}
			clusters = append(clusters, placement.ClusterOf(&mc))
		case isGoverned(item):
			governed = append(governed, item)
		}
	}
	for i, path := range cfg.Policies {
		objs, err := readObjects(path, maxFileBytes)
		if err != nil {
			return configError(rl, fmt.Sprintf("policies[%d]", i), err)
		}
		for _, obj := range objs {
			var cm corev1.ConfigMap
			if obj.GetAPIVersion() != "v1" || obj.GetKind() != "ConfigMap" ||
				runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cm) != nil || !placement.IsPolicy(&cm) {
				rl.Results = append(rl.Results, fileResult(path, obj, fn.Warning,
					"not a placement-policy ConfigMap (namespace "+placement.Namespace+", label "+placement.LanguageLabel+"): ignored"))
				continue
			}
			if err := addPolicy(cm, policySource{file: path}); err != nil {
				return err
			}
		}
	}
	for i, path := range cfg.Clusters {
		objs, err := readObjects(path, maxFileBytes)
		if err != nil {
			return configError(rl, fmt.Sprintf("clusters[%d]", i), err)
		}
		for _, obj := range objs {
			var mc clusterv1.ManagedCluster
			if obj.GroupVersionKind().Group != clusterv1.GroupName || obj.GetKind() != "ManagedCluster" ||
				runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &mc) != nil {
				rl.Results = append(rl.Results, fileResult(path, obj, fn.Warning, "not a ManagedCluster: ignored"))
				continue
			}
			clusters = append(clusters, placement.ClusterOf(&mc))
		}
	}

	engine := placement.New()
	broken := false
	for _, status := range engine.Load(ctx, configMaps) {
		for _, err := range status.Errors {
			broken = true
			rl.Results = append(rl.Results, policyResult(sources[status.ConfigMap], err))
		}
	}
	if broken {
		return nil // every evaluation would fail: the errors above say why
	}
	if err := engine.SetClusters(ctx, clusters); err != nil {
		return fmt.Errorf("the inventory of ManagedClusters: %w", err)
	}
	// Deciding only reads an item and applying its verdict writes it, so the
	// items are decided all at once, on every core, and the verdicts applied
	// after in item order; unless an item holds an alias, which may reach into
	// an item before it: deciding and applying each in turn, as ever, it sees
	// that item's annotations applied.
	var verdicts []verdict
	decideFirst := !slices.ContainsFunc(governed, krm.HoldsAlias)
	if decideFirst {
		verdicts = decideAll(ctx, engine, governed, cfg.Explain, timeout)
	}
	for i, item := range governed {
		var v verdict
		if decideFirst {
			v = verdicts[i]
		} else {
			v = decide(ctx, engine, item, cfg.Explain, timeout)
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

// isGoverned reports whether placement policies govern the item: a Policy or
// a Placement that is applied to the hub. The root-policy label exempts
// nothing: the hub passes only the replicas it writes itself, by identity, and
// a package never holds those.
func isGoverned(item *fn.KubeObject) bool {
	if item.IsLocalConfig() {
		return false
	}
	gk := item.GroupKind()
	switch {
	case gk.Group == "policy.open-cluster-management.io" && gk.Kind == "Policy",
		gk.Group == clusterv1.GroupName && gk.Kind == "Placement":
		return true
	}
	return false
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
	var set, removed []string // the annotations applying the result sets and removes
	for k, value := range annotations {
		if old, ok := current[k]; !ok || old != value {
			set = append(set, k)
		}
	}
	for k := range current {
		if _, kept := annotations[k]; !kept {
			removed = append(removed, k)
		}
	}
	sort.Strings(set)
	sort.Strings(removed)
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

// readObjects reads a YAML (or JSON) stream of objects, expanding Lists. A
// file larger than limit bytes is refused.
func readObjects(path string, limit int64) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	raw, err := krm.ReadAtMost(f, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if !obj.IsList() {
			objs = append(objs, obj)
			continue
		}
		if err := obj.EachListItem(func(o runtime.Object) error {
			objs = append(objs, o.(*unstructured.Unstructured))
			return nil
		}); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
	}
}

// fileResult is a result about an object of a file named in the config.
func fileResult(path string, obj *unstructured.Unstructured, severity fn.Severity, msg string) *fn.Result {
	return &fn.Result{Severity: severity, Message: msg, File: &fn.File{Path: path},
		ResourceRef: &fn.ResourceRef{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}}
}

// configError is an error about a field of the functionConfig.
func configError(rl *fn.ResourceList, field string, err error) error {
	return fmt.Errorf("functionConfig %s %q: %s: %w", configKind, rl.FunctionConfig.GetName(), field, err)
}
