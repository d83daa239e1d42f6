package configpolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	depclient "github.com/stolostron/kubernetes-dependency-watches/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/templatewatch"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// clusterReader is how one evaluation of a ConfigurationPolicy reads the
// objects it evaluates and the namespaces its namespaceSelector picks from:
// straight from the API server, or through the policy's watches (a policy
// evaluated by watch), which makes what it reads watched.
type clusterReader interface {
	// get returns the object, nil when it does not exist.
	get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// list returns the objects of a kind in namespace ("": all, or the kind
	// is cluster-scoped) that selector selects (nil: all).
	list(ctx context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error)
	// namespaces returns the cluster's namespaces.
	namespaces(ctx context.Context) ([]configpolicy.Namespace, error)
	// watching reports whether what is read is watched.
	watching() bool
}

// apiReader reads objects from the API server (uncached) and namespaces from
// the manager's cache.
type apiReader struct {
	objects client.Reader
	cached  client.Reader
}

func (a apiReader) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := a.objects.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return obj, nil
}

func (a apiReader) list(ctx context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if selector != nil {
		opts = append(opts, client.MatchingLabelsSelector{Selector: selector})
	}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := a.objects.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	return list.Items, nil
}

func (a apiReader) namespaces(ctx context.Context) ([]configpolicy.Namespace, error) {
	list := &corev1.NamespaceList{}
	if err := a.cached.List(ctx, list); err != nil {
		return nil, err
	}
	out := make([]configpolicy.Namespace, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, configpolicy.Namespace{Name: ns.Name, Labels: ns.Labels, Terminating: !ns.DeletionTimestamp.IsZero()})
	}
	return out, nil
}

func (apiReader) watching() bool { return false }

// watchReader reads through the watches of one policy (watcher) during one of
// its batches: every object, list and the namespaces it reads are watched
// until a batch no longer reads them, and a change of them evaluates the
// policy again.
type watchReader struct {
	templates *templatewatch.Resolver
	watcher   depclient.ObjectIdentifier
}

func (w watchReader) get(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return w.templates.Get(w.watcher, gvk, namespace, name)
}

func (w watchReader) list(_ context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]unstructured.Unstructured, error) {
	return w.templates.List(w.watcher, gvk, namespace, selector)
}

func (w watchReader) namespaces(ctx context.Context) ([]configpolicy.Namespace, error) {
	items, err := w.list(ctx, corev1.SchemeGroupVersion.WithKind("Namespace"), "", nil)
	if err != nil {
		return nil, err
	}
	out := make([]configpolicy.Namespace, 0, len(items))
	for _, ns := range items {
		out = append(out, configpolicy.Namespace{Name: ns.GetName(), Labels: ns.GetLabels(), Terminating: ns.GetDeletionTimestamp() != nil})
	}
	return out, nil
}

func (watchReader) watching() bool { return true }

// namespaceLister lists the cluster's namespaces once per evaluation.
type namespaceLister struct {
	reader clusterReader
	cached []configpolicy.Namespace
	done   bool
}

func (n *namespaceLister) list(ctx context.Context) ([]configpolicy.Namespace, error) {
	if n.done {
		return n.cached, nil
	}
	all, err := n.reader.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	n.cached, n.done = all, true
	return n.cached, nil
}
