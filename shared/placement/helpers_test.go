package placement

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
)

// examplesDir holds the committed example ConfigMaps, inventory and resources.
const examplesDir = "../../examples/placement"

// readObjects reads every object of a YAML stream file.
func readObjects(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

func exampleConfigMap(t testing.TB, file string) corev1.ConfigMap {
	t.Helper()
	objs := readObjects(t, filepath.Join(examplesDir, file))
	if len(objs) != 1 || objs[0].GetKind() != "ConfigMap" {
		t.Fatalf("%s: want one ConfigMap", file)
	}
	var cm corev1.ConfigMap
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

func exampleClusters(t testing.TB) []Cluster {
	t.Helper()
	var clusters []Cluster
	for _, obj := range readObjects(t, filepath.Join(examplesDir, "clusters.yaml")) {
		var mc clusterv1.ManagedCluster
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &mc); err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, ClusterOf(&mc))
	}
	return clusters
}

// exampleResources returns the governed resources of apps.yaml by name.
func exampleResources(t testing.TB) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, obj := range readObjects(t, filepath.Join(examplesDir, "apps.yaml")) {
		if obj.GetKind() != "Namespace" {
			out[obj.GetKind()+"/"+obj.GetName()] = obj.Object
		}
	}
	return out
}

// policyConfigMap is a placement-policy ConfigMap.
func policyConfigMap(name string, language Language, data map[string]string) corev1.ConfigMap {
	cm := corev1.ConfigMap{Data: data}
	cm.Name, cm.Namespace = name, Namespace
	cm.Labels = map[string]string{LanguageLabel: string(language)}
	return cm
}

// loaded returns an evaluator with the policies and clusters, failing the
// test when a policy does not compile.
func loaded(t testing.TB, clusters []Cluster, cms ...corev1.ConfigMap) *Evaluator {
	t.Helper()
	e := New()
	for _, s := range e.Load(context.Background(), cms) {
		for _, err := range s.Errors {
			t.Fatalf("policy does not compile: %v", err)
		}
	}
	if err := e.SetClusters(context.Background(), clusters); err != nil {
		t.Fatal(err)
	}
	return e
}

// resource is a Policy with the annotations.
func resource(annotations map[string]string) map[string]any {
	md := map[string]any{"name": "app", "namespace": "apps"}
	if annotations != nil {
		a := map[string]any{}
		for k, v := range annotations {
			a[k] = v
		}
		md["annotations"] = a
	}
	return map[string]any{"apiVersion": "policy.open-cluster-management.io/v1", "kind": "Policy", "metadata": md}
}
