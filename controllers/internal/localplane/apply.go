package localplane

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadManifestFile is ReadManifests of a file.
func ReadManifestFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadManifests(path, f)
}

// ReadManifests parses every YAML document of a multi-document stream into
// objects, skipping empty documents. src names the stream in errors.
func ReadManifests(src string, r io.Reader) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", src, i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", src, i, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		objs = append(objs, obj)
	}
}

// ManifestFiles lists the .yaml files under dir, recursively, in lexical order.
func ManifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// EnsureNamespace creates a namespace unless it exists.
func EnsureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// ApplyManifests applies (Apply) the objects of the YAML stream doc; src names
// the stream in errors.
func ApplyManifests(ctx context.Context, c client.Client, src, doc string) error {
	objs, err := ReadManifests(src, strings.NewReader(doc))
	if err != nil {
		return err
	}
	_, err = Apply(ctx, c, objs)
	return err
}

// Apply creates each object, or updates the latest version of it when it
// exists, creating its namespace first. A `status` in the manifest is written
// through the status subresource, so that examples can carry PlacementRule
// decisions. It returns the objects as the API server stored them.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	stored := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		obj = obj.DeepCopy()
		if ns := obj.GetNamespace(); ns != "" {
			if err := EnsureNamespace(ctx, c, ns); err != nil {
				return stored, err
			}
		}
		status, hasStatus := obj.Object["status"]
		err := c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			// A controller may write the object meanwhile (a root's status):
			// update the latest version.
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				existing := &unstructured.Unstructured{}
				existing.SetGroupVersionKind(obj.GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
					return err
				}
				obj.SetResourceVersion(existing.GetResourceVersion())
				return c.Update(ctx, obj)
			})
		}
		if err != nil {
			return stored, fmt.Errorf("%s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
		}
		if hasStatus {
			// A controller may write the status meanwhile: write over the
			// latest version.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				latest := &unstructured.Unstructured{}
				latest.SetGroupVersionKind(obj.GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), latest); err != nil {
					return err
				}
				obj.SetResourceVersion(latest.GetResourceVersion())
				obj.Object["status"] = status
				return c.Status().Update(ctx, obj)
			})
			if err != nil {
				return stored, fmt.Errorf("%s %s status: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
			}
		}
		stored = append(stored, obj)
	}
	return stored, nil
}

// APIObjects returns the objects of a manifest file that go to an API server: tool
// configuration (kustomizations, Kptfiles, function configs, local-config
// objects such as RolloutPlans written by plan-rollout) is left out.
func APIObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		gv := o.GetAPIVersion()
		switch {
		case o.GetKind() == "Kustomization", o.GetKind() == "Kptfile",
			strings.HasPrefix(gv, "fn.fleetpolicy.io/"), strings.HasPrefix(gv, "argoproj.io/"),
			strings.HasPrefix(gv, "kustomize.config.k8s.io/"), strings.HasPrefix(gv, "kpt.dev/"),
			o.GetAnnotations()["config.kubernetes.io/local-config"] == "true":
			continue
		}
		out = append(out, o)
	}
	return out
}

// EnsureClusterNamespace creates a managed cluster's namespace on a hub, or
// labels the one that exists, as OCM's registration does when the hub accepts
// the cluster: open-cluster-management.io/cluster-name=<name>. The placement
// webhook's namespaceSelector leaves namespaces with that label alone.
func EnsureClusterNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1.ClusterNameLabelKey: name}}}
	err := c.Create(ctx, ns)
	if apierrors.IsAlreadyExists(err) {
		patch := client.MergeFrom(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		err = c.Patch(ctx, ns, patch)
	}
	if err != nil {
		return fmt.Errorf("cluster namespace %s: %w", name, err)
	}
	return nil
}

// EnsureCluster registers a managed cluster on a hub: its namespace (see
// EnsureClusterNamespace) and its ManagedCluster (the hub replicates only to
// clusters that have one).
func EnsureCluster(ctx context.Context, c client.Client, name string) error {
	if err := EnsureClusterNamespace(ctx, c, name); err != nil {
		return err
	}
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, mc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("managed cluster %s: %w", name, err)
	}
	return nil
}
