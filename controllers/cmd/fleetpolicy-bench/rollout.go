package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// rollout runs the rollout suite with the hub's --status-batch-delay set to
// batchDelay, runs times. With parallelRoots above 1, each run also rolls
// that many roots out at once over the same clusters, and reports their total
// time against the single root's of the same run: roots whose rollouts
// progress one after the other would take parallelRoots times as long.
func (b *bench) rollout(ctx context.Context, clusters, waves int, batchDelay time.Duration, spokeWriters, parallelRoots, runs int) error {
	if err := b.ensureClusters(ctx, clusters); err != nil {
		return err
	}
	groups := make([][]string, waves)
	for i := range clusters {
		w := i * waves / clusters
		groups[w] = append(groups[w], clusterName(i))
	}
	name := fmt.Sprintf("HubRollout/clusters=%d/waves=%d/status-batch-delay=%s", clusters, waves, batchDelay)
	for r := range runs {
		run := fmt.Sprintf("r%d-%s-%d", clusters, strings.ReplaceAll(batchDelay.String(), ".", "-"), r)
		progress("rollout over %d clusters in %d waves, status batch delay %s, run %d of %d: floor", clusters, waves, batchDelay, r+1, runs)
		floorWave, err := b.floorRollout(ctx, groups, run+"-floor", 1)
		if err != nil {
			return fmt.Errorf("status batch delay %s, run %d, floor: %w", batchDelay, r+1, err)
		}
		progress("rollout, run %d of %d: hub", r+1, runs)
		h, err := b.hubRollout(ctx, groups, run, batchDelay, spokeWriters, 1)
		if err != nil {
			// Leave nothing behind for the hub processes of the suites that follow.
			return errors.Join(fmt.Errorf("status batch delay %s, run %d, hub: %w", batchDelay, r+1, err), b.cleanup(ctx, run, clusters))
		}
		b.res.line(name+"/wave", h.wave, withFloor(h.wave.Seconds(), floorWave.Seconds(), "s/wave")...)
		b.res.line(name+"/total", h.total, figure{h.total.Seconds(), "s"})
		b.res.line(name+"/cpu", 0, figure{h.cpu.Seconds(), "cpu-s"})
		if parallelRoots <= 1 {
			continue
		}
		progress("rollout, run %d of %d: floor, %d roots at once", r+1, runs, parallelRoots)
		manyFloorWave, err := b.floorRollout(ctx, groups, fmt.Sprintf("%s-x%d-floor", run, parallelRoots), parallelRoots)
		if err != nil {
			return fmt.Errorf("status batch delay %s, run %d, floor of %d roots: %w", batchDelay, r+1, parallelRoots, err)
		}
		progress("rollout, run %d of %d: hub, %d roots at once", r+1, runs, parallelRoots)
		many, err := b.hubRollout(ctx, groups, fmt.Sprintf("%s-x%d", run, parallelRoots), batchDelay, spokeWriters, parallelRoots)
		if err != nil {
			return errors.Join(fmt.Errorf("status batch delay %s, run %d, %d roots: %w", batchDelay, r+1, parallelRoots, err),
				b.cleanup(ctx, fmt.Sprintf("%s-x%d", run, parallelRoots), clusters))
		}
		parallelName := fmt.Sprintf("HubRollout/roots=%d/clusters=%d/waves=%d/status-batch-delay=%s", parallelRoots, clusters, waves, batchDelay)
		b.res.line(parallelName+"/wave", many.wave, withFloor(many.wave.Seconds(), manyFloorWave.Seconds(), "s/wave")...)
		b.res.line(parallelName+"/total", many.total, figure{many.total.Seconds(), "s"},
			figure{h.total.Seconds(), "one-root-s"}, figure{many.total.Seconds() / h.total.Seconds(), "x-one-root"})
		b.res.line(parallelName+"/cpu", 0, figure{many.cpu.Seconds(), "cpu-s"})
	}
	return nil
}

// rolloutRoot is the enforce root of a rollout run: one decision group per wave.
func rolloutRoot(name, run string) *policyv1.Policy {
	root := rootPolicy(name, run, 1)
	root.Spec.RemediationAction = policyv1.Enforce
	root.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{
		Type:                clusterv1alpha1.ProgressivePerGroup,
		ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{},
	}
	return root
}

func enforced(p *policyv1.Policy) int {
	if p.Spec.RemediationAction.IsEnforce() {
		return 1
	}
	return 0
}

// floorRollout creates the replicas of roots rollout roots informing (not
// timed), then switches them to enforce directly wave by wave (every root's
// replicas of the wave), one PUT each, each wave until a watch has seen it; it
// returns the median time of a wave and deletes the replicas.
func (b *bench) floorRollout(ctx context.Context, groups [][]string, run string, roots int) (time.Duration, error) {
	var rootPolicies []*policyv1.Policy
	for _, name := range rootNames(run, roots) {
		rootPolicies = append(rootPolicies, rolloutRoot(name, run))
	}
	count := newReplicaCount(enforced)
	stopFollowing, err := follow(ctx, b.admin, run, count)
	if err != nil {
		return 0, err
	}
	defer stopFollowing()
	resourceVersions := map[string]string{}
	var mu sync.Mutex
	var all []string
	for _, g := range groups {
		all = append(all, g...)
	}
	// Replica i of a wave of n clusters is root i/n's on cluster i%n.
	write := func(clusters []string, action policyv1.RemediationAction) func(i int) error {
		return func(i int) error {
			p := replication.Build(rootPolicies[i/len(clusters)], clusters[i%len(clusters)], action, nil)
			key := replicaKey(p.Namespace, p.Name)
			if action == policyv1.Inform {
				err := b.admin.Create(ctx, p)
				mu.Lock()
				resourceVersions[key] = p.ResourceVersion
				mu.Unlock()
				return err
			}
			mu.Lock()
			p.ResourceVersion = resourceVersions[key]
			mu.Unlock()
			return b.admin.Update(ctx, p)
		}
	}
	if err := b.parallel(roots*len(all), write(all, policyv1.Inform)); err != nil {
		return 0, err
	}
	var waves []time.Duration
	switched := 0
	for _, g := range groups {
		start := time.Now()
		if err := b.parallel(roots*len(g), write(g, policyv1.Enforce)); err != nil {
			return 0, err
		}
		switched += roots * len(g)
		done, err := count.waitFor(switched, 1, waitTimeout(roots*len(g)))
		if err != nil {
			return 0, err
		}
		waves = append(waves, done.Sub(start))
	}
	stopFollowing()
	return median(waves), b.cleanup(ctx, run, len(all))
}

// rolloutSample is what one hub rollout measured.
type rolloutSample struct {
	wave  time.Duration // median over the waves after the first
	total time.Duration
	cpu   time.Duration
}

// hubRollout binds roots rollout roots to a Placement with one decision group
// per wave, starts the hub with the given status batch delay and
// instantSpokes, creates the roots and waits until every replica has reported
// Compliant. The total runs from the API server's answer to the first root's
// create; the wave times are the first root's.
func (b *bench) hubRollout(ctx context.Context, groups [][]string, run string, batchDelay time.Duration, spokeWriters, roots int) (rolloutSample, error) {
	var s rolloutSample
	names := rootNames(run, roots)
	name := names[0]
	if err := b.setupPlacement(ctx, run, groups, true); err != nil {
		return s, err
	}
	if err := b.bindRoots(ctx, run, names); err != nil {
		return s, err
	}
	hub, err := b.startHub("--status-batch-delay=" + batchDelay.String())
	if err != nil {
		return s, err
	}
	defer hub.stop()
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	spokes := startInstantSpokes(ctx, b.admin, spokeWriters, n*roots)
	defer spokes.stop()
	stopFollowing, err := follow(ctx, b.admin, run, spokes)
	if err != nil {
		return s, err
	}
	defer stopFollowing()

	var start time.Time
	for i, name := range names {
		if err := b.admin.Create(ctx, rolloutRoot(name, run)); err != nil {
			return s, err
		}
		if i == 0 {
			start = time.Now()
		}
	}
	done, err := spokes.waitAllCompliant(waitTimeout(n*roots) + time.Duration(len(groups))*(batchDelay+5*time.Second))
	if err != nil {
		return s, fmt.Errorf("%w; %s", err, b.rolloutState(ctx, name, groups, spokes))
	}
	s.total = done.Sub(start)
	s.cpu, _ = hub.stop()
	stopFollowing()
	spokes.stop()
	waves, err := spokes.waveTimes(groups, replication.Name(benchNamespace, name))
	if err != nil {
		return s, err
	}
	if len(waves) > 0 {
		s.wave = median(waves)
	}
	var shown []string
	for _, w := range waves {
		shown = append(shown, fmt.Sprintf("%.2fs", w.Seconds()))
	}
	progress("rollout: total %.1fs, waves after the first %s", s.total.Seconds(), strings.Join(shown, " "))
	return s, b.cleanup(ctx, run, n)
}

// instantSpokes plays the status sync of every spoke at once, for the rollout
// suite only: it follows a run's replicas on the hub and, for every replica
// generation not reported yet, writes at once the status a spoke reports and the
// hub's rollout reads: status.observedGeneration, and compliant Compliant when
// the replica enforces, NonCompliant when it only informs (nothing creates the
// template's ConfigMap). It records when each replica (by replicaKey) was first
// seen enforced and when its Compliant report was written.
type instantSpokes struct {
	c       client.Client
	reports chan *policyv1.Policy
	workers sync.WaitGroup
	stopped bool

	mu          sync.Mutex
	enforcedAt  map[string]time.Time
	compliantAt map[string]time.Time
	want        int
	allDone     chan time.Time
	failures    []string
}

// replicaKey names replica (replication.Name) on cluster.
func replicaKey(cluster, replica string) string { return cluster + "/" + replica }

func startInstantSpokes(ctx context.Context, c client.Client, writers, replicas int) *instantSpokes {
	s := &instantSpokes{
		c: c, reports: make(chan *policyv1.Policy, 4*replicas),
		enforcedAt: map[string]time.Time{}, compliantAt: map[string]time.Time{},
		want: replicas, allDone: make(chan time.Time, 1),
	}
	for range writers {
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			for p := range s.reports {
				s.report(ctx, p)
			}
		}()
	}
	return s
}

func (s *instantSpokes) reset() {}

func (s *instantSpokes) see(p *policyv1.Policy, deleted bool, at time.Time) {
	if deleted {
		return
	}
	if p.Spec.RemediationAction.IsEnforce() {
		s.mu.Lock()
		if _, ok := s.enforcedAt[replicaKey(p.Namespace, p.Name)]; !ok {
			s.enforcedAt[replicaKey(p.Namespace, p.Name)] = at
		}
		s.mu.Unlock()
	}
	if p.Status.ObservedGeneration != p.Generation {
		s.reports <- p
	}
}

func (s *instantSpokes) report(ctx context.Context, p *policyv1.Policy) {
	enforce := p.Spec.RemediationAction.IsEnforce()
	p.Status.ObservedGeneration = p.Generation
	p.Status.ComplianceState = policyv1.NonCompliant
	if enforce {
		p.Status.ComplianceState = policyv1.Compliant
	}
	if err := s.c.Status().Update(ctx, p); err != nil {
		// A conflict means a newer generation is on its way here.
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			s.mu.Lock()
			s.failures = append(s.failures, fmt.Sprintf("%s/%s: %v", p.Namespace, p.Name, err))
			s.mu.Unlock()
		}
		return
	}
	if !enforce {
		return
	}
	at := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.compliantAt[replicaKey(p.Namespace, p.Name)]; !ok {
		s.compliantAt[replicaKey(p.Namespace, p.Name)] = at
		if len(s.compliantAt) == s.want {
			s.allDone <- at
		}
	}
}

// waitAllCompliant returns when every cluster has reported Compliant.
func (s *instantSpokes) waitAllCompliant(timeout time.Duration) (time.Time, error) {
	select {
	case at := <-s.allDone:
		return at, nil
	case <-time.After(timeout):
		s.mu.Lock()
		defer s.mu.Unlock()
		return time.Time{}, fmt.Errorf("timed out after %s: %d of %d replicas enforced, %d reported Compliant, failed reports %v",
			timeout, len(s.enforcedAt), s.want, len(s.compliantAt), s.failures)
	}
}

// stop ends the status writers; call it after the follower has stopped.
func (s *instantSpokes) stop() {
	if !s.stopped {
		s.stopped = true
		close(s.reports)
		s.workers.Wait()
	}
}

// waveTimes are, for each wave after the first, the controller's time from the
// last Compliant report of the previous wave until the whole wave was seen
// enforced, for the replicas named replica. A cluster enforced before the
// previous wave had reported is an error: the hub rolled out of order.
func (s *instantSpokes) waveTimes(groups [][]string, replica string) ([]time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var waves []time.Duration
	for k := 1; k < len(groups); k++ {
		var previousDone, enforcedFirst, enforcedLast time.Time
		for _, c := range groups[k-1] {
			if at := s.compliantAt[replicaKey(c, replica)]; at.After(previousDone) {
				previousDone = at
			}
		}
		for i, c := range groups[k] {
			at := s.enforcedAt[replicaKey(c, replica)]
			if i == 0 || at.Before(enforcedFirst) {
				enforcedFirst = at
			}
			if at.After(enforcedLast) {
				enforcedLast = at
			}
		}
		if enforcedFirst.Before(previousDone) {
			var early []string
			for _, c := range groups[k] {
				if s.enforcedAt[replicaKey(c, replica)].Before(previousDone) {
					early = append(early, c)
				}
			}
			slices.Sort(early)
			return nil, fmt.Errorf("wave %d: %d cluster(s) enforced before wave %d had reported Compliant (e.g. %s)", k, len(early), k-1, early[0])
		}
		waves = append(waves, enforcedLast.Sub(previousDone))
	}
	return waves, nil
}

// rolloutState describes, for an error, the root's rollout status as the hub
// wrote it and the waves that are not wholly enforced.
func (b *bench) rolloutState(ctx context.Context, name string, groups [][]string, spokes *instantSpokes) string {
	root := &policyv1.Policy{}
	if err := b.admin.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, root); err != nil {
		return fmt.Sprintf("root policy %s/%s: %v", benchNamespace, name, err)
	}
	perCluster := map[string]policyv1.RolloutStatus{}
	byStatus := map[policyv1.RolloutStatus]int{}
	for _, e := range root.Status.Status {
		if e != nil {
			perCluster[e.ClusterName] = e.RolloutStatus
			byStatus[e.RolloutStatus]++
		}
	}
	var waves []string
	spokes.mu.Lock()
	defer spokes.mu.Unlock()
	for k, g := range groups {
		var missing []string
		for _, c := range g {
			if _, ok := spokes.enforcedAt[replicaKey(c, replication.Name(benchNamespace, name))]; !ok {
				missing = append(missing, c+"="+string(perCluster[c]))
			}
		}
		if len(missing) > 0 {
			waves = append(waves, fmt.Sprintf("wave %d: %d not enforced (%s)", k, len(missing), strings.Join(missing[:min(3, len(missing))], ", ")))
		}
	}
	return fmt.Sprintf("root policy %s/%s: status.rolloutStatus %q, status.status[].rolloutStatus %v, generation %d; %s",
		benchNamespace, name, root.Status.RolloutStatus, byStatus, root.Generation, strings.Join(waves, "; "))
}
