package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// propagation runs one P×N scenario: the floor, then the hub, runs times.
func (b *bench) propagation(ctx context.Context, sc scenario, runs int) error {
	if err := b.ensureClusters(ctx, sc.clusters); err != nil {
		return err
	}
	name := "HubPropagation/" + sc.key()
	for r := range runs {
		run := fmt.Sprintf("p%dx%d-%d", sc.policies, sc.clusters, r)
		progress("propagation %s, run %d of %d: floor", sc.key(), r+1, runs)
		floorCreate, floorUpdate, floorCPU, floorRSS, err := b.floorPropagation(ctx, sc, run+"-floor")
		if err != nil {
			return fmt.Errorf("%s, run %d, floor: %w", sc.key(), r+1, err)
		}
		progress("propagation %s, run %d of %d: hub", sc.key(), r+1, runs)
		h, err := b.hubPropagation(ctx, sc, run, rootPolicy)
		if err != nil {
			return fmt.Errorf("%s, run %d, hub: %w", sc.key(), r+1, err)
		}
		b.res.line(name+"/create", h.create, withFloor(h.create.Seconds(), floorCreate.Seconds(), "s")...)
		b.res.line(name+"/update", h.update, withFloor(h.update.Seconds(), floorUpdate.Seconds(), "s")...)
		perThousand := float64(sc.replicas()) / 1000
		b.res.line(name+"/cpu", 0, withFloor(h.cpu.Seconds()/perThousand, floorCPU.Seconds()/perThousand, "cpu-s/1000-replicas")...)
		b.res.line(name+"/rss", 0, withFloor(mib(h.rssBytes), mib(floorRSS), "MiB-peak-rss")...)
	}
	return nil
}

// memory runs the hub alone on one P×N scenario, runs times: its peak RSS after
// creating every replica and taking one update of every root, and its CPU. It
// starts from a fresh plane: measured on the plane that had just held the
// 100x1000 propagation, the same hub peaked at 1,139 MiB instead of 223.
func (b *bench) memory(ctx context.Context, sc scenario, runs int) error {
	b.stop()
	if err := b.ensureClusters(ctx, sc.clusters); err != nil {
		return err
	}
	name := "HubMemory/" + sc.key()
	for r := range runs {
		progress("memory %s, run %d of %d", sc.key(), r+1, runs)
		h, err := b.hubPropagation(ctx, sc, fmt.Sprintf("m%dx%d-%d", sc.policies, sc.clusters, r), rootPolicy)
		if err != nil {
			return fmt.Errorf("%s, run %d: %w", sc.key(), r+1, err)
		}
		progress("memory %s: create %.1fs, update %.1fs", sc.key(), h.create.Seconds(), h.update.Seconds())
		b.res.line(name, 0, figure{mib(h.rssBytes), "MiB-peak-rss"})
		b.res.line(name+"/cpu", 0, figure{h.cpu.Seconds(), "cpu-s"},
			figure{h.cpu.Seconds() / (float64(sc.replicas()) / 1000), "cpu-s/1000-replicas"})
	}
	return nil
}

// waitTimeout bounds the wait for a number of replicas.
func waitTimeout(replicas int) time.Duration {
	return max(5*time.Minute, time.Duration(replicas)*20*time.Millisecond)
}

// floorPropagation runs the floor writer of the run (runFloorWriter) as a child
// process: it creates the scenario's replicas directly, then updates them with
// one PUT each, each phase timed until this command's watch has seen them all.
// It returns the times, and the floor writer's CPU and peak RSS; then deletes
// the replicas.
func (b *bench) floorPropagation(ctx context.Context, sc scenario, run string) (create, update time.Duration, cpu time.Duration, rssBytes int64, err error) {
	count := newReplicaCount(templateVersion)
	stopFollowing, err := follow(ctx, b.admin, run, count)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer stopFollowing()
	floor, err := b.startFloorWriter(sc, run)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer floor.kill()
	n := sc.replicas()
	start, err := floor.next("creating")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	done, err := count.waitFor(n, 1, waitTimeout(n))
	if err != nil {
		return 0, 0, 0, 0, err
	}
	create = done.Sub(start)
	if start, err = floor.next("updating"); err != nil {
		return 0, 0, 0, 0, err
	}
	if done, err = count.waitFor(n, 2, waitTimeout(n)); err != nil {
		return 0, 0, 0, 0, err
	}
	update = done.Sub(start)
	if cpu, rssBytes, err = floor.wait(); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("floor writer: %w", err)
	}
	stopFollowing()
	return create, update, cpu, rssBytes, b.cleanup(ctx, run, sc.clusters)
}

// hubSample is what one hub run measured.
type hubSample struct {
	create, update, cpu time.Duration
	rssBytes            int64
}

// rootMaker makes a benchmarked root policy of a run; version changes its
// template.
type rootMaker func(name, run string, version int) *policyv1.Policy

// hubPropagation binds the scenario's roots (made by root) in one
// PlacementBinding to one Placement, starts the hub, creates the roots until a
// watch has seen every replica, updates every root until every replica carries
// the update, stops the hub and cleans up.
func (b *bench) hubPropagation(ctx context.Context, sc scenario, run string, root rootMaker) (hubSample, error) {
	var s hubSample
	names := rootNames(run, sc.policies)
	var decisions [][]string
	for d := 0; d*b.perDecision < sc.clusters; d++ {
		var group []string
		for i := d * b.perDecision; i < min(sc.clusters, (d+1)*b.perDecision); i++ {
			group = append(group, clusterName(i))
		}
		decisions = append(decisions, group)
	}
	if err := b.setupPlacement(ctx, run, decisions, false, names); err != nil {
		return s, err
	}
	hub, err := b.startHub()
	if err != nil {
		return s, err
	}
	defer hub.stop()
	count := newReplicaCount(templateVersion)
	stopFollowing, err := follow(ctx, b.admin, run, count)
	if err != nil {
		return s, err
	}
	defer stopFollowing()
	n := sc.replicas()

	start := time.Now()
	for _, name := range names {
		if err := b.admin.Create(ctx, root(name, run, 1)); err != nil {
			return s, err
		}
	}
	done, err := count.waitFor(n, 1, waitTimeout(n))
	if err != nil {
		return s, err
	}
	s.create = done.Sub(start)

	start = time.Now()
	for _, name := range names {
		updated := &policyv1.Policy{}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := b.admin.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, updated); err != nil {
				return err
			}
			updated.Spec = root(name, run, 2).Spec
			return b.admin.Update(ctx, updated)
		}); err != nil {
			return s, err
		}
	}
	if done, err = count.waitFor(n, 2, waitTimeout(n)); err != nil {
		return s, err
	}
	s.update = done.Sub(start)
	s.cpu, s.rssBytes = hub.stop()
	stopFollowing()
	return s, b.cleanup(ctx, run, sc.clusters)
}

func rootNames(run string, policies int) []string {
	names := make([]string, policies)
	for j := range names {
		names[j] = fmt.Sprintf("%s-r%03d", run, j)
	}
	return names
}

// rootPolicy is a benchmarked root policy of a run; version changes its template.
func rootPolicy(name, run string, version int) *policyv1.Policy {
	return rootPolicyWithData(name, run, fmt.Sprintf(`"version":"%d"`, version))
}

// rootPolicyWithData is a benchmarked root policy whose ConfigurationPolicy
// wants a ConfigMap with data (JSON members).
func rootPolicyWithData(name, run, data string) *policyv1.Policy {
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name, Labels: map[string]string{runLabel: run}},
		Spec: policyv1.PolicySpec{
			RemediationAction: policyv1.Inform,
			PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(
				`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"bench"},` +
					`"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":` +
					`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench","namespace":"default"},"data":{` + data + `}}}]}}`)}}},
		},
	}
}

// setupPlacement creates Placement name with one PlacementDecision per entry of
// decisions (labelled as decision group i, "wave-i", when groups is set, as OCM's
// placement controller labels them) and one PlacementBinding of the roots to it.
func (b *bench) setupPlacement(ctx context.Context, name string, decisions [][]string, groups bool, roots []string) error {
	pl := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name}}
	if err := b.admin.Create(ctx, pl); err != nil {
		return err
	}
	for d, clusters := range decisions {
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Namespace: benchNamespace, Name: fmt.Sprintf("%s-decision-%d", name, d),
			Labels: map[string]string{clusterv1beta1.PlacementLabel: name},
		}}
		if groups {
			pd.Labels[clusterv1beta1.DecisionGroupIndexLabel] = strconv.Itoa(d)
			pd.Labels[clusterv1beta1.DecisionGroupNameLabel] = fmt.Sprintf("wave-%d", d)
		}
		if err := b.admin.Create(ctx, pd); err != nil {
			return err
		}
		for _, c := range clusters {
			pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
		}
		if err := b.admin.Status().Update(ctx, pd); err != nil {
			return err
		}
	}
	pb := &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: benchNamespace, Name: name},
		PlacementRef: binding.PlacementRef{Kind: binding.KindPlacement, Name: name}.PlacementSubject(),
	}
	for _, root := range roots {
		pb.Subjects = append(pb.Subjects, policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: binding.KindPolicy, Name: root})
	}
	return b.admin.Create(ctx, pb)
}

// cleanup deletes a run's roots, replicas (a collection delete per cluster
// namespace) and placement objects, so that the next hub process does not cache
// them. The hub must be stopped.
func (b *bench) cleanup(ctx context.Context, run string, clusters int) error {
	labels := client.MatchingLabels{runLabel: run}
	if err := b.admin.DeleteAllOf(ctx, &policyv1.Policy{}, client.InNamespace(benchNamespace), labels); err != nil {
		return err
	}
	if err := b.parallel(clusters, func(i int) error {
		return b.admin.DeleteAllOf(ctx, &policyv1.Policy{}, client.InNamespace(clusterName(i)), labels)
	}); err != nil {
		return err
	}
	inBench := client.InNamespace(benchNamespace)
	return errors.Join(
		b.admin.DeleteAllOf(ctx, &clusterv1beta1.PlacementDecision{}, inBench, client.MatchingLabels{clusterv1beta1.PlacementLabel: run}),
		client.IgnoreNotFound(b.admin.Delete(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: run}})),
		client.IgnoreNotFound(b.admin.Delete(ctx, &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: run}})),
	)
}
