package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// maxFileBytes bounds the size of each file under policies and clusters
// (64 MiB: some 10,000 ManagedClusters with their status): a larger file, or
// one without end such as /dev/zero, is refused before it is read whole.
const maxFileBytes = 64 << 20

// inputs are what the placement policies are run with: the policies, the
// inventory of clusters and the items the policies govern.
type inputs struct {
	configMaps []corev1.ConfigMap
	sources    map[string]policySource // by ConfigMap name
	clusters   []placement.Cluster
	governed   []*fn.KubeObject
}

// policySource is a placement-policy ConfigMap and where it came from: an item
// of the package, or a file.
type policySource struct {
	item *fn.KubeObject
	file string
}

// read reads the inputs from the items of rl, then from the files cfg names.
// What it cannot use it reports on rl and leaves out; its error is a file the
// config names that cannot be read, or a placement policy given twice.
func read(rl *fn.ResourceList, cfg Config) (*inputs, error) {
	in := &inputs{sources: map[string]policySource{}}
	if err := in.readItems(rl); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for i, path := range cfg.Policies {
		objs, err := readObjects(path, maxFileBytes)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("policies").Index(i), path, err.Error()))
			continue
		}
		if err := in.addPolicyFile(rl, path, objs); err != nil {
			return nil, err
		}
	}
	for i, path := range cfg.Clusters {
		objs, err := readObjects(path, maxFileBytes)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("clusters").Index(i), path, err.Error()))
			continue
		}
		in.addClusterFile(rl, path, objs)
	}
	if len(errs) > 0 {
		return nil, krm.ConfigError(rl.FunctionConfig, errs)
	}
	return in, nil
}

// readItems reads the placement-policy ConfigMaps, the ManagedClusters and
// the governed items of the package.
func (in *inputs) readItems(rl *fn.ResourceList) error {
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
			if err := in.addPolicy(cm, policySource{item: item}); err != nil {
				return err
			}
		case gk.Group == clusterv1.GroupName && gk.Kind == "ManagedCluster":
			var mc clusterv1.ManagedCluster
			if err := krm.Decode(item, &mc); err != nil {
				rl.Results = append(rl.Results, krm.Unreadable(item, err))
				continue
			}
			in.clusters = append(in.clusters, placement.ClusterOf(&mc))
		case isGoverned(item):
			in.governed = append(in.governed, item)
		}
	}
	return nil
}

// addPolicyFile adds the placement-policy ConfigMaps of the file at path,
// warning about its other objects. A ConfigMap that does not decode is an
// error result naming it and the field, as for the package's items.
func (in *inputs) addPolicyFile(rl *fn.ResourceList, path string, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		var cm corev1.ConfigMap
		if obj.GetAPIVersion() != "v1" || obj.GetKind() != "ConfigMap" {
			rl.Results = append(rl.Results, notAPlacementPolicy(path, obj))
			continue
		}
		if result := decodeFileObject(path, obj, &cm); result != nil {
			rl.Results = append(rl.Results, result)
			continue
		}
		if !placement.IsPolicy(&cm) {
			rl.Results = append(rl.Results, notAPlacementPolicy(path, obj))
			continue
		}
		if err := in.addPolicy(cm, policySource{file: path}); err != nil {
			return err
		}
	}
	return nil
}

func notAPlacementPolicy(path string, obj *unstructured.Unstructured) *fn.Result {
	return fileResult(path, obj, fn.Warning,
		"not a placement-policy ConfigMap (namespace "+placement.Namespace+", label "+placement.LanguageLabel+"): ignored")
}

// addClusterFile adds the ManagedClusters of the file at path, warning about
// its other objects. A ManagedCluster that does not decode is an error result
// naming it and the field, as for the package's items.
func (in *inputs) addClusterFile(rl *fn.ResourceList, path string, objs []*unstructured.Unstructured) {
	for _, obj := range objs {
		if obj.GroupVersionKind().Group != clusterv1.GroupName || obj.GetKind() != "ManagedCluster" {
			rl.Results = append(rl.Results, fileResult(path, obj, fn.Warning, "not a ManagedCluster: ignored"))
			continue
		}
		var mc clusterv1.ManagedCluster
		if result := decodeFileObject(path, obj, &mc); result != nil {
			rl.Results = append(rl.Results, result)
			continue
		}
		in.clusters = append(in.clusters, placement.ClusterOf(&mc))
	}
}

// decodeFileObject decodes obj, read from the file at path, into the typed
// value into points at with krm.Decode, as the package's items are decoded;
// when it does not decode, the error result names the object, the file and
// the field.
func decodeFileObject(path string, obj *unstructured.Unstructured, into any) *fn.Result {
	raw, err := json.Marshal(obj.Object)
	var node *yaml.Node
	if err == nil {
		node, err = krm.NodeFromJSON(raw)
	}
	if err != nil {
		return fileResult(path, obj, fn.Error, "cannot be read: "+err.Error())
	}
	item := fn.MoveToKubeObject(yaml.NewRNode(node))
	if err := krm.Decode(item, into); err != nil {
		result := krm.Unreadable(item, err)
		result.File = &fn.File{Path: path}
		return result
	}
	return nil
}

// addPolicy adds a placement-policy ConfigMap; one of the same name given
// before is an error.
func (in *inputs) addPolicy(cm corev1.ConfigMap, src policySource) error {
	if _, dup := in.sources[cm.Name]; dup {
		return fmt.Errorf("placement policy ConfigMap %s/%s is given twice", cm.Namespace, cm.Name)
	}
	in.sources[cm.Name] = src
	in.configMaps = append(in.configMaps, cm)
	return nil
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
