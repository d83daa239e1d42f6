package main

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func object(apiVersion, kind, namespace, name string, labels map[string]string) unstructured.Unstructured {
	u := unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func TestInventoryClientReads(t *testing.T) {
	c := newInventoryClient([]unstructured.Unstructured{
		object("v1", "ConfigMap", "policies", "a", map[string]string{"tier": "gold"}),
		object("v1", "ConfigMap", "policies", "b", nil),
		object("v1", "ConfigMap", "other", "a", nil),
		object("cluster.open-cluster-management.io/v1", "ManagedCluster", "", "cluster1", map[string]string{"env": "prod"}),
		object("example.com/v1", "Widget", "", "w", nil),
	})
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ctx := context.Background()

	for _, tc := range []struct {
		name, namespace, get string
		selector             string
		want                 []string // names, or the one found by get
		notFound             bool
	}{
		{name: "get in a namespace", namespace: "policies", get: "a", want: []string{"policies/a"}},
		{name: "get of another namespace's object", namespace: "policies", get: "c", notFound: true},
		{name: "list one namespace", namespace: "policies", want: []string{"policies/a", "policies/b"}},
		{name: "list every namespace", want: []string{"policies/a", "policies/b", "other/a"}},
		{name: "list by label", selector: "tier=gold", want: []string{"policies/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Resource(configMaps).Namespace(tc.namespace)
			var got []string
			if tc.get != "" {
				o, err := r.Get(ctx, tc.get, metav1.GetOptions{})
				if tc.notFound {
					if !apierrors.IsNotFound(err) {
						t.Fatalf("Get = %v, %v; want NotFound", o, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got = []string{o.GetNamespace() + "/" + o.GetName()}
			} else {
				list, err := r.List(ctx, metav1.ListOptions{LabelSelector: tc.selector})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range list.Items {
					got = append(got, o.GetNamespace()+"/"+o.GetName())
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}

	t.Run("a read returns a copy", func(t *testing.T) {
		o, err := c.Resource(configMaps).Namespace("policies").Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o.SetName("changed")
		if again, _ := c.Resource(configMaps).Namespace("policies").Get(ctx, "a", metav1.GetOptions{}); again == nil || again.GetName() != "a" {
			t.Fatal("changing what Get returned changed the inventory")
		}
	})

	t.Run("writes are refused", func(t *testing.T) {
		r := c.Resource(configMaps).Namespace("policies")
		if _, err := r.Create(ctx, &unstructured.Unstructured{}, metav1.CreateOptions{}); !errors.Is(err, errReadOnly) {
			t.Errorf("Create: %v", err)
		}
		if err := r.Delete(ctx, "a", metav1.DeleteOptions{}); !errors.Is(err, errReadOnly) {
			t.Errorf("Delete: %v", err)
		}
		if _, err := r.Patch(ctx, "a", "", nil, metav1.PatchOptions{}); !errors.Is(err, errReadOnly) {
			t.Errorf("Patch: %v", err)
		}
	})
}

func TestInventoryClientDiscovery(t *testing.T) {
	c := newInventoryClient([]unstructured.Unstructured{
		object("example.com/v1", "Widget", "", "w", nil),
		object("example.com/v1", "Gadget", "ns", "g", nil),
	})
	for _, tc := range []struct {
		groupVersion, kind string
		namespaced, found  bool
	}{
		{"v1", "ConfigMap", true, true},
		{"v1", "Secret", true, true},
		{"v1", "Namespace", false, true},
		{"cluster.open-cluster-management.io/v1", "ManagedCluster", false, true},
		{"policy.open-cluster-management.io/v1", "Policy", true, true},
		{"example.com/v1", "Widget", false, true}, // as the package holds it
		{"example.com/v1", "Gadget", true, true},
		{"example.com/v1", "Unknown", false, false},
	} {
		list, err := c.ServerResourcesForGroupVersion(tc.groupVersion)
		if err != nil {
			t.Fatalf("%s: %v", tc.groupVersion, err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Kind == tc.kind {
				found = true
				if r.Namespaced != tc.namespaced || r.Name != resourceName(tc.kind) || !slices.Contains(r.Verbs, "watch") {
					t.Errorf("%s %s: %+v", tc.groupVersion, tc.kind, r)
				}
			}
		}
		if found != tc.found {
			t.Errorf("%s %s served = %v, want %v", tc.groupVersion, tc.kind, found, tc.found)
		}
	}
	if _, err := c.ServerResourcesForGroupVersion("nowhere.example.com/v1"); !apierrors.IsNotFound(err) {
		t.Errorf("an unserved group/version: %v, want NotFound", err)
	}
	groups, err := c.ServerGroups()
	if err != nil || len(groups.Groups) == 0 {
		t.Errorf("ServerGroups = %v, %v", groups, err)
	}
}
