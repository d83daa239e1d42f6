package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

// schedulePlacements stands in for OCM's placement controller, which the demo
// does not run: every half second it writes the PlacementDecisions (with their
// decision groups) that shared/scheduling computes for each Placement from the
// ManagedClusters — the same rules as OCM's scheduler, applied offline.
func schedulePlacements(ctx context.Context, c client.Client) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		scheduleOnce(ctx, c)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func scheduleOnce(ctx context.Context, c client.Client) {
	clusters := &clusterv1.ManagedClusterList{}
	placements := &clusterv1beta1.PlacementList{}
	if c.List(ctx, clusters) != nil || c.List(ctx, placements) != nil {
		return
	}
	for i := range placements.Items {
		p := &placements.Items[i]
		result, err := scheduling.Schedule(scheduling.Input{Placement: p, Clusters: clusters.Items, Now: time.Now()})
		if err != nil {
			continue
		}
		for _, want := range result.Decisions {
			writeDecision(ctx, c, p, want)
		}
	}
}

func writeDecision(ctx context.Context, c client.Client, p *clusterv1beta1.Placement, want clusterv1beta1.PlacementDecision) {
	want.Namespace = p.Namespace
	got := &clusterv1beta1.PlacementDecision{}
	err := c.Get(ctx, client.ObjectKeyFromObject(&want), got)
	switch {
	case apierrors.IsNotFound(err):
		status := want.Status
		want.ResourceVersion = ""
		if err := c.Create(ctx, &want); err != nil {
			return
		}
		want.Status = status
		_ = c.Status().Update(ctx, &want)
	case err == nil && (!equality.Semantic.DeepEqual(got.Status, want.Status) || !equality.Semantic.DeepEqual(got.Labels, want.Labels)):
		got.Labels = want.Labels
		if err := c.Update(ctx, got); err != nil {
			return
		}
		got.Status = want.Status
		_ = c.Status().Update(ctx, got)
	}
}
