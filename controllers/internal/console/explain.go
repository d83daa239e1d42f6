package console

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
)

// maxExplainClusters bounds the ManagedClusters one explanation reads.
const maxExplainClusters = 10000

// explainPlacement asks the placement policies, as the hub's /explain does
// (shared/placement's Evaluator.Explain), why they keep a root off each
// cluster they keep it off: only for a root the placement policies narrowed
// (binding.ClustersAnnotation), reading the policies' ConfigMaps and the
// ManagedClusters with the viewer's identity, one explanation at a time in the
// whole console. It returns each refused cluster's reasons, and a note when it
// could not explain (the viewer may not read the policies, another
// explanation runs, an evaluation failed).
func (s *Server) explainPlacement(ctx context.Context, c client.Client, root *policyv1.Policy) (map[string][]string, string) {
	if _, narrowed := root.Annotations[binding.ClustersAnnotation]; !narrowed {
		return nil, ""
	}
	select {
	case s.explainSlot <- struct{}{}:
		defer func() { <-s.explainSlot }()
	default:
		return nil, "the placement policies' reasons: another explanation is being evaluated; reload for them"
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(placement.Namespace), client.HasLabels{placement.LanguageLabel},
		client.Limit(s.o.MaxReads)); err != nil {
		return nil, "the placement policies' reasons: " + err.Error()
	}
	var clusters []placement.Cluster
	list := &clusterv1.ManagedClusterList{}
	for {
		if err := c.List(ctx, list, client.Limit(s.o.MaxReads), client.Continue(list.Continue)); err != nil {
			return nil, "the placement policies' reasons: " + err.Error()
		}
		for i := range list.Items {
			clusters = append(clusters, placement.ClusterOf(&list.Items[i]))
		}
		if list.Continue == "" {
			break
		}
		if len(clusters) >= maxExplainClusters {
			return nil, fmt.Sprintf("the placement policies' reasons: more than %d ManagedClusters", maxExplainClusters)
		}
	}
	ev := placement.New()
	var notes []string
	for _, st := range ev.Load(ctx, cms.Items) {
		if len(st.Errors) > 0 {
			notes = append(notes, "placement policy "+st.ConfigMap+": "+st.Annotation())
		}
	}
	if err := ev.SetClusters(ctx, clusters); err != nil {
		return nil, "the placement policies' reasons: " + err.Error()
	}
	object, err := runtime.DefaultUnstructuredConverter.ToUnstructured(root)
	if err != nil {
		return nil, "the placement policies' reasons: " + err.Error()
	}
	object["apiVersion"], object["kind"] = policyv1.GroupVersion.String(), "Policy"
	result, err := ev.Explain(ctx, object)
	if err != nil {
		return nil, "the placement policies' reasons: " + err.Error()
	}
	reasons := map[string][]string{}
	for _, d := range result.Clusters {
		if d.Allowed {
			continue
		}
		for _, r := range d.Reasons {
			if !r.Allowed {
				reasons[d.Cluster] = append(reasons[d.Cluster], r.String())
			}
		}
	}
	return reasons, strings.Join(notes, "; ")
}
