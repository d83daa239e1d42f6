package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// writeReplicas makes the writes of s's reconcile (write) and records in s
// what they came to. In a full reconcile every replica that is not as it
// should be was written just now, or is in flight: the failures are all there
// are, and failureStreaks says which of them the root names.
func (p *Propagator) writeReplicas(ctx context.Context, s *rootReconcile, writes []replicaWrite) {
	s.written, s.templateErrs, s.failures, s.writeErr = p.write(ctx, s.key, s.root, writes)
	if !s.statusOnly {
		s.failures = p.failures.reported(s.key, s.failures)
	}
	sortByCluster(s.failures) // for HubTemplatesResolved too
	clusters := len(s.bound.resolution.Clusters)
	replicasPerPolicy.WithLabelValues(s.key.Namespace, s.key.Name).Set(float64(clusters))
	if s.written > 0 && s.writeErr == nil {
		propagationSeconds.Observe(p.Clock.Since(s.now).Seconds())
		log.FromContext(ctx).V(1).Info("propagated", "writes", s.written, "clusters", clusters)
	}
	if s.writeErr == nil {
		p.reportWave(s.root, s.step)
	}
}

// reportWave emits an Event when a step reached new clusters of a progressive
// rollout (rollout.StepResult.Reached), and the step's notes with it.
func (p *Propagator) reportWave(root *policyv1.Policy, step rollout.StepResult) {
	var reached []string
	groups := map[string]bool{}
	for _, d := range step.Reached {
		reached = append(reached, d.Name)
		groups[fmt.Sprintf("%s/%s[%d]", d.Group.Placement, d.Group.GroupName, d.Group.GroupIndex)] = true
	}
	if len(reached) == 0 || !rollout.Progressive(&root.Spec) {
		return
	}
	shown := reached
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(reached)-10))
	}
	p.Recorder.Eventf(root, nil, corev1.EventTypeNormal, reasonRolloutWave, "Rollout",
		"enforcing on %d cluster(s) of %s: %s", len(reached), strings.Join(slices.Sorted(maps.Keys(groups)), ", "), strings.Join(shown, ", "))
	for _, note := range step.Notes {
		p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonRolloutNote, "Rollout", "%s", note.String())
	}
}

// The verbs of replica writes, as the replicaWrites metric and the
// ReplicasFailed condition name them.
const (
	verbCreate = "create"
	verbUpdate = "update"
	verbDelete = "delete"
)

// verbRolloutStatus names the rollout status patch of a replica in the
// replicaWrites metric.
const verbRolloutStatus = "rolloutStatus"

func (w replicaWrite) verb() string {
	switch {
	case w.statusOnly:
		return verbRolloutStatus
	case w.isDelete():
		return verbDelete
	case w.actual == nil:
		return verbCreate
	}
	return verbUpdate
}

// namespace is the cluster namespace the write goes to.
func (w replicaWrite) namespace() string {
	if w.actual != nil {
		return w.actual.Namespace
	}
	return w.cluster
}

// body is the replica to write, as JSON, with resourceVersion set.
func (w replicaWrite) body(resourceVersion string) []byte {
	if w.desired == nil {
		return w.replicas.JSON(w.cluster, w.action, resourceVersion)
	}
	desired := *w.desired
	desired.ResourceVersion = resourceVersion
	b, _ := json.Marshal(&desired) // a Policy always encodes
	return b
}

// rolloutStatusPatch is the merge patch that sets a replica's rolloutStatus.
func rolloutStatusPatch(status policyv1.RolloutStatus) []byte {
	return []byte(`{"status":{"rolloutStatus":"` + string(status) + `"}}`)
}

// write performs the writes of the replicas of root (named key) with at most
// p.Writers in flight, resolving the hub templates of templated candidates
// first (a cluster whose templates fail gets no write: its replica keeps its
// last good spec, or is not created), every spec write before the first
// rollout status patch, and records each accepted write in
// p.ownWrites. It returns the number of writes issued, the template errors by
// cluster, and the writes the API server did not take: those in the error,
// and an update's conflicts, which are no error (the cache was behind: the
// newer replica's event brings the root back) but are named on the root when
// they persist (failureStreaks).
func (p *Propagator) write(ctx context.Context, key types.NamespacedName, root *policyv1.Policy, writes []replicaWrite) (int, map[string]error, []writeFailure, error) {
	if len(writes) == 0 {
		return 0, nil, nil, nil
	}
	workers := max(1, min(p.Writers, len(writes)))
	var mu sync.Mutex
	var errs []error
	var failures []writeFailure
	templateErrs := map[string]error{}
	written := 0
	missingNamespaces := map[string]bool{}
	// writeSpec makes w's spec write (create, update, delete) and reports
	// whether the replica is there with it (or was already, for a templated
	// candidate that needs none).
	writeSpec := func(w replicaWrite) bool {
		if w.templated {
			var ok bool
			var err error
			if w, ok, err = p.resolve(ctx, root, w); !ok {
				if err != nil {
					mu.Lock()
					templateErrs[w.cluster] = err
					mu.Unlock()
				}
				return err == nil && w.actual != nil
			}
		}
		err := p.writeInSlot(ctx, key, w)
		conflict := w.verb() == verbUpdate && apierrors.IsConflict(err)
		mu.Lock()
		written++
		if err != nil {
			failures = append(failures, writeFailure{cluster: w.namespace(), verb: w.verb(), err: err})
		}
		mu.Unlock()
		if err == nil || conflict {
			replaced := ""
			if w.actual != nil {
				replaced = w.actual.ResourceVersion
			}
			p.ownWrites.specWrote(key, w.namespace(), replaced, p.Clock.Now())
			return err == nil
		}
		mu.Lock()
		if w.verb() == verbCreate && apierrors.IsNotFound(err) {
			missingNamespaces[w.cluster] = true
		} else {
			errs = append(errs, err)
		}
		mu.Unlock()
		return false
	}
	// The spec writes first, then the rollout status patches (of the replicas
	// written, and the patches of their own): a cluster's replica waits for no
	// other replica's patch, so the replicas reach their clusters as fast as
	// writes that carry no rollout status would.
	var patches []replicaWrite
	inWorkers(workers, writes, func(w replicaWrite) {
		if !w.statusOnly && !writeSpec(w) || w.rolloutStatus == "" || w.isDelete() {
			return
		}
		mu.Lock()
		patches = append(patches, w)
		mu.Unlock()
	})
	inWorkers(workers, patches, func(w replicaWrite) {
		if err := p.patchRolloutStatusInSlot(ctx, key, w); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("rolloutStatus of the replica in %s: %w", w.cluster, err))
			mu.Unlock()
		}
	})

	if root != nil {
		for ns := range missingNamespaces {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonClusterNamespace, "Propagate",
				"cluster namespace %s does not exist; the replica will be created when it does", ns)
		}
		if len(errs) > 0 {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonPropagationFailed, "Propagate",
				"%d of %d replica writes failed: %v", len(errs), written, errs[0])
		}
	}
	if len(missingNamespaces) > 0 {
		errs = append(errs, fmt.Errorf("%d cluster namespaces missing", len(missingNamespaces)))
	}
	return written, templateErrs, failures, errors.Join(errs...)
}

// resolve turns a templated candidate write into a write of the replica with
// its hub templates resolved for the cluster (the cached replica's IV kept),
// or into no write (ok false) when the result is what the cluster already has.
func (p *Propagator) resolve(ctx context.Context, root *policyv1.Policy, w replicaWrite) (_ replicaWrite, ok bool, err error) {
	if p.Templates == nil {
		return w, false, errors.New("hub templates are not resolved by this propagator")
	}
	desired := w.replicas.Build(w.cluster, w.action)
	var previousIV string
	if w.actual != nil {
		previousIV = w.actual.Annotations[templates.IVAnnotation]
	}
	if err := p.Templates.resolve(ctx, root, desired, previousIV); err != nil {
		return w, false, err
	}
	if w.actual != nil && w.actual.Annotations[cachedDigestAnnotation] == replication.Digest(desired) {
		return w, false, nil
	}
	w.desired, w.templated = desired, false
	return w, true, nil
}

// inWorkers calls do for each of items, from n goroutines, and returns when
// every call has returned.
func inWorkers[T any](n int, items []T, do func(T)) {
	jobs := make(chan T)
	var wg sync.WaitGroup
	for range min(n, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range jobs {
				do(item)
			}
		}()
	}
	for _, item := range items {
		jobs <- item
	}
	close(jobs)
	wg.Wait()
}

// writeInSlot is writeOne once one of the hub-wide write slots is free.
func (p *Propagator) writeInSlot(ctx context.Context, root types.NamespacedName, w replicaWrite) error {
	if p.writeSlots == nil {
		return p.writeOne(ctx, root, w)
	}
	if err := p.writeSlots.Acquire(ctx, 1); err != nil {
		return err
	}
	defer p.writeSlots.Release(1)
	return p.writeOne(ctx, root, w)
}

// patchRolloutStatusInSlot patches w.rolloutStatus onto the status of root's
// replica in w.cluster once a hub-wide write slot is free, and records the
// accepted patch (ownWrites). A replica that is gone is no
// error: its delete event brings the root back.
func (p *Propagator) patchRolloutStatusInSlot(ctx context.Context, root types.NamespacedName, w replicaWrite) error {
	if p.writeSlots != nil {
		if err := p.writeSlots.Acquire(ctx, 1); err != nil {
			return err
		}
		defer p.writeSlots.Release(1)
	}
	err := p.Policies.Patch(types.MergePatchType).Namespace(w.cluster).Resource("policies").
		Name(replication.Name(root.Namespace, root.Name)).SubResource("status").
		Body(rolloutStatusPatch(w.rolloutStatus)).Do(ctx).Error()
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	replicaWrites.WithLabelValues(verbRolloutStatus).Inc()
	p.ownWrites.rolloutStatusWrote(root, w.cluster, w.rolloutStatus, p.Clock.Now())
	return nil
}

// writeOne writes one replica of root. A write refused only because the
// cache was behind returns nil: a create of the replica that exists (the
// create event brings it back here), an update or delete of a replica that is
// gone (so does the delete event). An update's conflict is returned: the
// cache was behind too, and the caller counts it (failureStreaks).
func (p *Propagator) writeOne(ctx context.Context, root types.NamespacedName, w replicaWrite) error {
	var err error
	verb := w.verb()
	switch verb {
	case verbDelete:
		err = client.IgnoreNotFound(p.Client.Delete(ctx, w.actual))
	case verbCreate:
		err = p.Policies.Post().Namespace(w.cluster).Resource("policies").
			Body(w.body("")).Do(ctx).Error()
		if apierrors.IsAlreadyExists(err) {
			return p.nameTaken(ctx, root, w.cluster, err)
		}
	default:
		err = p.Policies.Put().Namespace(w.cluster).Resource("policies").Name(w.actual.Name).
			Body(w.body(w.actual.ResourceVersion)).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
	}
	if err == nil {
		replicaWrites.WithLabelValues(verb).Inc()
	}
	return err
}

// nameTaken tells apart the two reasons a create of root's replica in cluster
// met AlreadyExists (exists): the cache was behind the replica (nil), or a
// Policy that is not root's replica holds its name (exists, saying so: the
// hub does not take over a Policy it did not write, and the replica is not
// created until that one is deleted or renamed). The cache has the other
// Policy, or will bring it back here with its event.
func (p *Propagator) nameTaken(ctx context.Context, root types.NamespacedName, cluster string, exists error) error {
	held := &policyv1.Policy{}
	err := p.Client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: replication.Name(root.Namespace, root.Name)},
		held, client.UnsafeDisableDeepCopy)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	if of, ok := replication.RootOf(held); ok && of == root {
		return nil
	}
	return fmt.Errorf("%w: that Policy is not a replica of %s (its label %s does not name the root); the hub does not write over it",
		exists, root, replication.LabelRootPolicy)
}
