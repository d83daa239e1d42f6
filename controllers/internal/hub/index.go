package hub

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// Cache indexes. Values are namespace-qualified where the index spans namespaces.
const (
	// indexBindingSubject: "<Kind>/<name>" of each subject of a PlacementBinding
	// that OCM reads (binding.Subjects).
	indexBindingSubject = "fleetpolicy.subject"
	// indexBindingPlacement: "<Kind>/<name>" of a PlacementBinding's placementRef,
	// when OCM reads it (binding.RefOf).
	indexBindingPlacement = "fleetpolicy.placementRef"
	// indexSetMember: the name of each member policy of a PolicySet.
	indexSetMember = "fleetpolicy.member"
	// indexReplicaRoot: "<ns>.<name>" of a replica's root policy, listed across
	// namespaces only (indexAcrossNamespaces).
	indexReplicaRoot = "fleetpolicy.root"
	// indexDecisionPlacement: "<ns>/<placement>" of a PlacementDecision.
	indexDecisionPlacement = "fleetpolicy.placement"
	// indexSetDependency: "<ns>/<set>" of each PolicySet a root policy (or one of
	// its templates) depends on; replicas carry the set expanded.
	indexSetDependency = "fleetpolicy.setDependency"
	// indexDecidedCluster: each cluster a PlacementDecision or a PlacementRule's
	// status names, so that a ManagedCluster appearing or leaving reaches the
	// root policies placed on it.
	indexDecidedCluster = "fleetpolicy.decidedCluster"
)

// placementLabel is the label OCM puts on a Placement's PlacementDecisions.
const placementLabel = clusterv1beta1.PlacementLabel

func kindName(kind, name string) string { return kind + "/" + name }

func setupIndexes(ctx context.Context, mgr manager.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &policyv1.PlacementBinding{}, indexBindingSubject, func(o client.Object) []string {
		pb := o.(*policyv1.PlacementBinding)
		out := make([]string, 0, len(pb.Subjects))
		for s := range binding.Subjects(pb) {
			out = append(out, kindName(s.Kind, s.Name))
		}
		return out
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &policyv1.PlacementBinding{}, indexBindingPlacement, func(o client.Object) []string {
		if ref, ok := binding.RefOf(o.(*policyv1.PlacementBinding)); ok {
			return []string{kindName(ref.Kind, ref.Name)}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &policyv1beta1.PolicySet{}, indexSetMember, func(o client.Object) []string {
		set := o.(*policyv1beta1.PolicySet)
		out := make([]string, 0, len(set.Spec.Policies))
		for _, p := range set.Spec.Policies {
			out = append(out, string(p))
		}
		return out
	}); err != nil {
		return err
	}
	if err := indexAcrossNamespaces(ctx, mgr, &policyv1.Policy{}, indexReplicaRoot, func(o client.Object) []string {
		if root, ok := replication.RootOf(o); ok {
			return []string{replication.Name(root.Namespace, root.Name)}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &policyv1.Policy{}, indexSetDependency, func(o client.Object) []string {
		p := o.(*policyv1.Policy)
		if replication.IsReplica(p) {
			return nil
		}
		var sets []string
		add := func(deps []policyv1.PolicyDependency) {
			for _, d := range deps {
				if d.Kind == "PolicySet" {
					ns := d.Namespace
					if ns == "" {
						ns = p.Namespace
					}
					sets = append(sets, ns+"/"+d.Name)
				}
			}
		}
		add(p.Spec.Dependencies)
		for _, t := range p.Spec.PolicyTemplates {
			if t != nil {
				add(t.ExtraDependencies)
			}
		}
		return sets
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &clusterv1beta1.PlacementDecision{}, indexDecidedCluster, func(o client.Object) []string {
		d := o.(*clusterv1beta1.PlacementDecision)
		out := make([]string, 0, len(d.Status.Decisions))
		for _, cd := range d.Status.Decisions {
			out = append(out, cd.ClusterName)
		}
		return out
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &appsv1.PlacementRule{}, indexDecidedCluster, func(o client.Object) []string {
		rule := o.(*appsv1.PlacementRule)
		out := make([]string, 0, len(rule.Status.Decisions))
		for _, d := range rule.Status.Decisions {
			out = append(out, d.ClusterName)
		}
		return out
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, &clusterv1beta1.PlacementDecision{}, indexDecisionPlacement, func(o client.Object) []string {
		if name, ok := o.GetLabels()[placementLabel]; ok {
			return []string{o.GetNamespace() + "/" + name}
		}
		return nil
	})
}

// fieldIndexPrefix names a field index and allNamespacesKey prefixes its
// values that list across namespaces: controller-runtime's spellings (its
// cache's FieldIndexName, and KeyToNamespacedKey for the namespace ""),
// which its List looks up for a field selector without a namespace.
const (
	fieldIndexPrefix = "field:"
	allNamespacesKey = "__all_namespaces/"
)

// indexAcrossNamespaces is IndexField for an index only ever listed across
// namespaces (client.MatchingFields without client.InNamespace). IndexField
// also keys every value by the object's namespace, for lists in one
// namespace: for indexReplicaRoot that is one set per cluster namespace and
// root holding one replica, 30,000 sets at 10 roots × 3,000 clusters (5.5
// of the index's 10 MiB of heap in the memory benchmark) that nothing reads.
func indexAcrossNamespaces(ctx context.Context, mgr manager.Manager, obj client.Object, field string, extract client.IndexerFunc) error {
	informer, err := mgr.GetCache().GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	return informer.AddIndexers(toolscache.Indexers{fieldIndexPrefix + field: func(o any) ([]string, error) {
		object, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object of type %T is not an Object", o)
		}
		values := extract(object)
		for i, v := range values {
			values[i] = allNamespacesKey + v
		}
		return values, nil
	}})
}

// replicaIndex finds cached objects by an informer index's value, as
// toolscache.Indexer does (by the index's own name: fieldIndexPrefix, and
// allNamespacesKey for indexAcrossNamespaces), handing out the cache's own
// objects.
type replicaIndex interface {
	ByIndex(indexName, indexedValue string) ([]any, error)
}

// policyIndex is the indexer of the cache's Policy informer.
func policyIndex(ctx context.Context, c cache.Cache) (replicaIndex, error) {
	informer, err := c.GetInformer(ctx, &policyv1.Policy{})
	if err != nil {
		return nil, err
	}
	indexed, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the cache's Policy informer (%T) has no indexer", informer)
	}
	return indexed.GetIndexer(), nil
}
