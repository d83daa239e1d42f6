package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/openapi"
	restclient "k8s.io/client-go/rest"
)

// inventoryClient is a read-only hub API over the objects of a package (the
// exported inventory): the dynamic and discovery clients the template
// library's resolver reads through, as it reads a hub. It serves get and list
// of the objects it holds, by group, version, kind, namespace, name and label
// selector; it discovers the kinds the package holds and the hub's built-in
// ones (builtinKinds); every write is refused. The library enforces the access
// rule (LookupNamespace, ClusterScopedAllowList) before it asks: the client
// answers what a hub would.
type inventoryClient struct {
	objects []unstructured.Unstructured
	// kinds are the kinds served, per group/version.
	kinds map[schema.GroupVersion]map[string]kindInfo
}

type kindInfo struct {
	kind       string
	namespaced bool
}

// builtinKinds are the kinds a hub serves whatever the package holds, and
// whether they are namespaced: a template may look them up and find none.
var builtinKinds = map[schema.GroupVersion][]kindInfo{
	{Version: "v1"}: {{"ConfigMap", true}, {"Secret", true}, {"ServiceAccount", true}, {"Service", true},
		{"Namespace", false}, {"Node", false}, {"PersistentVolume", false}},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}: {{"Role", true}, {"RoleBinding", true},
		{"ClusterRole", false}, {"ClusterRoleBinding", false}},
	{Group: "apps", Version: "v1"}:                                    {{"Deployment", true}, {"StatefulSet", true}, {"DaemonSet", true}},
	{Group: "cluster.open-cluster-management.io", Version: "v1"}:      {{"ManagedCluster", false}},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1"}: {{"Placement", true}, {"PlacementDecision", true}},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta2"}: {{"ManagedClusterSet", false}, {"ManagedClusterSetBinding", true}},
	{Group: "policy.open-cluster-management.io", Version: "v1"}:       {{"Policy", true}, {"PlacementBinding", true}},
	{Group: "policy.open-cluster-management.io", Version: "v1beta1"}:  {{"PolicySet", true}},
}

// newInventoryClient serves objects. A kind the package holds is namespaced
// when one of its objects has a namespace, or when the hub's kind is.
func newInventoryClient(objects []unstructured.Unstructured) *inventoryClient {
	c := &inventoryClient{objects: objects, kinds: map[schema.GroupVersion]map[string]kindInfo{}}
	add := func(gv schema.GroupVersion, k kindInfo) {
		if c.kinds[gv] == nil {
			c.kinds[gv] = map[string]kindInfo{}
		}
		if known, found := c.kinds[gv][k.kind]; found {
			k.namespaced = k.namespaced || known.namespaced
		}
		c.kinds[gv][k.kind] = k
	}
	for gv, kinds := range builtinKinds {
		for _, k := range kinds {
			add(gv, k)
		}
	}
	for _, o := range objects {
		add(o.GroupVersionKind().GroupVersion(), kindInfo{o.GetKind(), o.GetNamespace() != ""})
	}
	return c
}

// resourceName is the resource name the client gives kind.
func resourceName(kind string) string { return strings.ToLower(kind) + "s" }

// errReadOnly answers every write.
var errReadOnly = errors.New("the inventory is read-only: a preview writes nothing")

// Resource is the dynamic client's entry point.
func (c *inventoryClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	r := &inventoryResource{client: c, gvr: gvr}
	for _, k := range c.kinds[gvr.GroupVersion()] {
		if resourceName(k.kind) == gvr.Resource {
			r.kind = k
		}
	}
	return r
}

// inventoryResource is one resource of the inventory, in one namespace or
// in all.
type inventoryResource struct {
	client    *inventoryClient
	gvr       schema.GroupVersionResource
	kind      kindInfo
	namespace string
}

func (r *inventoryResource) Namespace(ns string) dynamic.ResourceInterface {
	out := *r
	out.namespace = ns
	return &out
}

func (r *inventoryResource) matches(o *unstructured.Unstructured) bool {
	return r.kind.kind != "" && o.GroupVersionKind() == r.gvr.GroupVersion().WithKind(r.kind.kind) &&
		(r.namespace == "" || o.GetNamespace() == r.namespace)
}

func (r *inventoryResource) Get(_ context.Context, name string, _ metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if len(subresources) == 0 {
		for i := range r.client.objects {
			if o := &r.client.objects[i]; r.matches(o) && o.GetName() == name {
				return o.DeepCopy(), nil
			}
		}
	}
	return nil, apierrors.NewNotFound(r.gvr.GroupResource(), name)
}

func (r *inventoryResource) List(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	selector, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(r.gvr.GroupVersion().String())
	list.SetKind(r.kind.kind + "List")
	for i := range r.client.objects {
		if o := &r.client.objects[i]; r.matches(o) && selector.Matches(labels.Set(o.GetLabels())) {
			list.Items = append(list.Items, *o.DeepCopy())
		}
	}
	return list, nil
}

func (r *inventoryResource) Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (r *inventoryResource) Update(context.Context, *unstructured.Unstructured, metav1.UpdateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (r *inventoryResource) UpdateStatus(context.Context, *unstructured.Unstructured, metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (r *inventoryResource) Delete(context.Context, string, metav1.DeleteOptions, ...string) error {
	return errReadOnly
}

func (r *inventoryResource) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return errReadOnly
}

func (r *inventoryResource) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("the inventory cannot be watched: it does not change")
}

func (r *inventoryResource) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (r *inventoryResource) Apply(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

func (r *inventoryResource) ApplyStatus(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return nil, errReadOnly
}

// ServerResourcesForGroupVersion lists the kinds served in groupVersion, or
// answers NotFound as a hub does for a group/version it does not serve.
func (c *inventoryClient) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	gv, err := schema.ParseGroupVersion(groupVersion)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	kinds, found := c.kinds[gv]
	if !found {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gv.Group}, groupVersion)
	}
	return c.resourceList(gv, kinds), nil
}

func (c *inventoryClient) resourceList(gv schema.GroupVersion, kinds map[string]kindInfo) *metav1.APIResourceList {
	list := &metav1.APIResourceList{GroupVersion: gv.String()}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: resourceName(k), Kind: k, Namespaced: kinds[k].namespaced, Verbs: metav1.Verbs{"get", "list", "watch"},
		})
	}
	return list
}

// groupVersions are the served group/versions, sorted.
func (c *inventoryClient) groupVersions() []schema.GroupVersion {
	gvs := make([]schema.GroupVersion, 0, len(c.kinds))
	for gv := range c.kinds {
		gvs = append(gvs, gv)
	}
	slices.SortFunc(gvs, func(a, b schema.GroupVersion) int { return strings.Compare(a.String(), b.String()) })
	return gvs
}

func (c *inventoryClient) ServerGroups() (*metav1.APIGroupList, error) {
	groups := &metav1.APIGroupList{}
	index := map[string]int{}
	for _, gv := range c.groupVersions() {
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		i, found := index[gv.Group]
		if !found {
			i = len(groups.Groups)
			index[gv.Group] = i
			groups.Groups = append(groups.Groups, metav1.APIGroup{Name: gv.Group, PreferredVersion: v})
		}
		groups.Groups[i].Versions = append(groups.Groups[i].Versions, v)
	}
	return groups, nil
}

func (c *inventoryClient) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	groups, _ := c.ServerGroups()
	var gs []*metav1.APIGroup
	for i := range groups.Groups {
		gs = append(gs, &groups.Groups[i])
	}
	resources, _ := c.ServerPreferredResources()
	return gs, resources, nil
}

func (c *inventoryClient) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	var lists []*metav1.APIResourceList
	for _, gv := range c.groupVersions() {
		lists = append(lists, c.resourceList(gv, c.kinds[gv]))
	}
	return lists, nil
}

func (c *inventoryClient) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	lists, _ := c.ServerPreferredResources()
	for _, l := range lists {
		l.APIResources = slices.DeleteFunc(l.APIResources, func(r metav1.APIResource) bool { return !r.Namespaced })
	}
	return lists, nil
}

func (c *inventoryClient) ServerVersion() (*version.Info, error) {
	return &version.Info{GitVersion: "inventory"}, nil
}

var errNoSchemas = errors.New("the inventory serves no OpenAPI schemas")

func (c *inventoryClient) OpenAPISchema() (*openapiv2.Document, error) { return nil, errNoSchemas }

func (c *inventoryClient) OpenAPIV3() openapi.Client { return noOpenAPIV3{} }

// RESTClient is nil: the inventory is not served over HTTP.
func (c *inventoryClient) RESTClient() restclient.Interface { return nil }

func (c *inventoryClient) WithLegacy() discovery.DiscoveryInterface { return c }

// noOpenAPIV3 serves no OpenAPI v3 paths.
type noOpenAPIV3 struct{}

func (noOpenAPIV3) Paths() (map[string]openapi.GroupVersion, error) { return nil, errNoSchemas }

var (
	_ dynamic.Interface            = (*inventoryClient)(nil)
	_ discovery.DiscoveryInterface = (*inventoryClient)(nil)
)
