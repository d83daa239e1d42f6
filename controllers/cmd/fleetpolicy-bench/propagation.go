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
		floor, err := b.floorPropagation(ctx, sc, run+"-floor", false)
		if err != nil {
			return fmt.Errorf("%s, run %d, floor: %w", sc.key(), r+1, err)
		}
		var pure propagationSample
		if sc.replicas() <= largeReplicas {
			progress("propagation %s, run %d of %d: pure-write floor", sc.key(), r+1, runs)
			if pure, err = b.floorPropagation(ctx, sc, run+"-pure", true); err != nil {
				return fmt.Errorf("%s, run %d, pure-write floor: %w", sc.key(), r+1, err)
			}
		}
		progress("propagation %s, run %d of %d: hub", sc.key(), r+1, runs)
		h, err := b.hubPropagation(ctx, sc, run, rootPolicy, false)
		if err != nil {
			return fmt.Errorf("%s, run %d, hub: %w", sc.key(), r+1, err)
		}
		b.res.line(name+"/startup", h.startup, figure{h.startup.Seconds(), "s"})
		b.res.line(name+"/first-replica", h.firstReplica, withFloor(h.firstReplica.Seconds(), floor.firstReplica.Seconds(), "s")...)
		b.res.line(name+"/create", h.create, withFloor(h.create.Seconds(), floor.create.Seconds(), "s")...)
		b.res.line(name+"/update", h.update, withFloor(h.update.Seconds(), floor.update.Seconds(), "s")...)
		if pure.create > 0 {
			b.res.line(name+"/create/pure-write", h.create, withFloor(h.create.Seconds(), pure.create.Seconds(), "s")...)
			b.res.line(name+"/update/pure-write", h.update, withFloor(h.update.Seconds(), pure.update.Seconds(), "s")...)
		}
		perThousand := float64(sc.replicas()) / 1000
		b.res.line(name+"/cpu", 0, withFloor(h.cpu.Seconds()/perThousand, floor.cpu.Seconds()/perThousand, "cpu-s/1000-replicas")...)
		b.res.line(name+"/rss", 0, withFloor(mib(h.rssBytes), mib(floor.rssBytes), "MiB-peak-rss")...)
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
		h, err := b.hubPropagation(ctx, sc, fmt.Sprintf("m%dx%d-%d", sc.policies, sc.clusters, r), rootPolicy, true)
		if err != nil {
			return fmt.Errorf("%s, run %d: %w", sc.key(), r+1, err)
		}
		progress("memory %s: create %.1fs, update %.1fs", sc.key(), h.create.Seconds(), h.update.Seconds())
		b.res.line(name, 0, figure{mib(h.rssBytes), "MiB-peak-rss"})
		b.res.line(name+"/x-cache", 0, withFloor(mib(h.rssBytes), mib(h.floorRSSBytes), "MiB-peak-rss")...)
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
// one PUT each, each phase timed from when the floor writer starts it until
// this command's watch has seen them all, with their rollout status
// (propagated; for the first replica, until it has seen one). With pureWrite
// the floor writer only writes (runPureWriter), and is told to update once
// this command's watch has seen every create. It returns the times, and the
// floor writer's CPU and peak RSS; then deletes the replicas.
func (b *bench) floorPropagation(ctx context.Context, sc scenario, run string, pureWrite bool) (propagationSample, error) {
	var s propagationSample
	count := newReplicaCount(propagated)
	stopFollowing, err := follow(ctx, b.admin, run, count)
	if err != nil {
		return s, err
	}
	defer stopFollowing()
	floor, err := b.startFloorWriter(sc, run, pureWrite)
	if err != nil {
		return s, err
	}
	defer floor.kill()
	n := sc.replicas()
	start, err := floor.next("creating")
	if err != nil {
		return s, err
	}
	done, err := count.waitFor(n, 1, waitTimeout(n))
	if err != nil {
		return s, err
	}
	s.create, s.firstReplica = done.Sub(start), count.firstSeenOf(1).Sub(start)
	if pureWrite {
		if _, err := fmt.Fprintln(floor.proceed); err != nil {
			return s, err
		}
	}
	if start, err = floor.next("updating"); err != nil {
		return s, err
	}
	if done, err = count.waitFor(n, 2, waitTimeout(n)); err != nil {
		return s, err
	}
	s.update = done.Sub(start)
	if s.cpu, s.rssBytes, err = floor.wait(); err != nil {
		return s, fmt.Errorf("floor writer: %w", err)
	}
	stopFollowing()
	return s, b.cleanup(ctx, run, sc.clusters)
}

// propagationSample is what one propagation run measured, of the hub or of
// the floor.
type propagationSample struct {
	create, update, firstReplica, cpu time.Duration
	rssBytes                          int64
	// floorRSSBytes is the peak RSS of the memory floor (runCacheFloor) over
	// the same replicas, when the run measured it.
	floorRSSBytes int64
	// startup is the hub's, from its start until /readyz answered 200.
	startup time.Duration
}

// rootMaker makes a benchmarked root policy of a run; version changes its
// template.
type rootMaker func(name, run string, version int) *policyv1.Policy

// hubPropagation makes one Placement of the scenario's clusters, starts the hub
// and waits until it is ready, then does what a user does: binds the
// scenario's roots (made by root) in one PlacementBinding and creates them,
// until a watch has seen every replica with its rollout status (propagated),
// then updates every root until every replica carries the update. Each time
// runs from when the API server accepted the user's first write of the phase
// (its answer to the first root's create or update). Then it stops the hub,
// with memoryFloor measures the memory floor (runCacheFloor) over the same
// replicas, and cleans up.
func (b *bench) hubPropagation(ctx context.Context, sc scenario, run string, root rootMaker, memoryFloor bool) (propagationSample, error) {
	var s propagationSample
	names := rootNames(run, sc.policies)
	if err := b.setupPlacement(ctx, run, b.decisionsOver(sc.clusters), false); err != nil {
		return s, err
	}
	hub, err := b.startHub()
	if err != nil {
		return s, err
	}
	defer hub.stop()
	s.startup = hub.startup
	count := newReplicaCount(propagated)
	stopFollowing, err := follow(ctx, b.admin, run, count)
	if err != nil {
		return s, err
	}
	defer stopFollowing()
	n := sc.replicas()

	if err := b.bindRoots(ctx, run, names); err != nil {
		return s, err
	}
	var start time.Time
	for i, name := range names {
		if err := b.admin.Create(ctx, root(name, run, 1)); err != nil {
			return s, err
		}
		if i == 0 {
			start = time.Now()
		}
	}
	done, err := count.waitFor(n, 1, waitTimeout(n))
	if err != nil {
		return s, err
	}
	s.create, s.firstReplica = done.Sub(start), count.firstSeenOf(1).Sub(start)

	for i, name := range names {
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
		if i == 0 {
			start = time.Now()
		}
	}
	if done, err = count.waitFor(n, 2, waitTimeout(n)); err != nil {
		return s, err
	}
	s.update = done.Sub(start)
	s.cpu, s.rssBytes = hub.stop()
	stopFollowing()
	if memoryFloor {
		floor, err := b.startFloorProcess(cacheFloorFlag, "--run", run)
		if err != nil {
			return s, err
		}
		if _, s.floorRSSBytes, err = floor.wait(); err != nil {
			return s, fmt.Errorf("memory floor: %w", err)
		}
	}
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

// decisionsOver are the first clusters clusters in PlacementDecisions of
// --per-decision clusters each.
func (b *bench) decisionsOver(clusters int) [][]string {
	var decisions [][]string
	for d := 0; d*b.perDecision < clusters; d++ {
		var group []string
		for i := d * b.perDecision; i < min(clusters, (d+1)*b.perDecision); i++ {
			group = append(group, clusterName(i))
		}
		decisions = append(decisions, group)
	}
	return decisions
}

// setupPlacement creates Placement name with one PlacementDecision per entry of
// decisions (labelled as decision group i, "wave-i", when groups is set, as OCM's
// placement controller labels them).
func (b *bench) setupPlacement(ctx context.Context, name string, decisions [][]string, groups bool) error {
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
	return nil
}

// bindRoots creates PlacementBinding name of the roots to Placement name.
func (b *bench) bindRoots(ctx context.Context, name string, roots []string) error {
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
