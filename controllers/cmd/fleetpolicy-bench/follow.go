package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// runLabel marks the root policies of one run; replicas copy it from their root,
// so that one label selector follows every replica of a run.
const runLabel = "fleetpolicy.io/bench-run"

// policySink receives what a follower sees: reset before the objects of a
// (re)list, then every object in the order the API server reports it, with the
// time it arrived.
type policySink interface {
	reset()
	see(p *policyv1.Policy, deleted bool, at time.Time)
}

// follow lists the replicas of one run (not its roots, which carry the run label
// too) and watches them from one goroutine until the returned stop is called.
// A watch the server closes is resumed from the last resourceVersion seen; only
// when that is no longer possible are the replicas listed again (the sink is
// reset and sees them all). The first list is done when follow returns, so
// writes made after it are all seen.
func follow(ctx context.Context, c client.WithWatch, run string, sink policySink) (stop func(), err error) {
	isReplica, err := labels.NewRequirement(replication.LabelRootPolicy, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	replicas := client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(labels.Set{runLabel: run}).Add(*isReplica)}
	ctx, cancel := context.WithCancel(ctx)
	watchFrom := func(resourceVersion string) (watch.Interface, error) {
		return c.Watch(ctx, &policyv1.PolicyList{}, replicas, &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: resourceVersion, AllowWatchBookmarks: true}})
	}
	list := func() (watch.Interface, string, error) {
		l := &policyv1.PolicyList{}
		if err := c.List(ctx, l, replicas); err != nil {
			return nil, "", err
		}
		at := time.Now()
		sink.reset()
		for i := range l.Items {
			sink.see(&l.Items[i], false, at)
		}
		w, err := watchFrom(l.ResourceVersion)
		return w, l.ResourceVersion, err
	}
	w, resourceVersion, err := list()
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			expired := false
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					expired = true
					break
				}
				p, ok := ev.Object.(*policyv1.Policy)
				if !ok {
					continue
				}
				resourceVersion = p.ResourceVersion
				if ev.Type != watch.Bookmark {
					sink.see(p, ev.Type == watch.Deleted, time.Now())
				}
			}
			w.Stop()
			for ctx.Err() == nil {
				if !expired {
					if w, err = watchFrom(resourceVersion); err == nil {
						break
					}
				}
				if w, resourceVersion, err = list(); err == nil {
					break
				}
				progress("listing replicas of run %s again: %v", run, err)
				time.Sleep(time.Second)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// replicaCount counts a run's replicas by a class (the version their template
// carries, whether they enforce) and tells when a given number are of a class.
type replicaCount struct {
	classify func(*policyv1.Policy) int
	mu       sync.Mutex
	classes  map[string]int    // namespace/name -> class
	count    map[int]int       // class -> replicas
	first    map[int]time.Time // class -> when a replica of it was first seen
	want     int
	class    int
	reached  chan time.Time // nil when nobody waits
}

func newReplicaCount(classify func(*policyv1.Policy) int) *replicaCount {
	return &replicaCount{classify: classify, classes: map[string]int{}, count: map[int]int{}, first: map[int]time.Time{}}
}

func (r *replicaCount) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.classes)
	clear(r.count)
	clear(r.first)
}

func (r *replicaCount) see(p *policyv1.Policy, deleted bool, at time.Time) {
	key := p.Namespace + "/" + p.Name
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.classes[key]; ok {
		r.count[old]--
		delete(r.classes, key)
	}
	if !deleted {
		class := r.classify(p)
		r.classes[key] = class
		r.count[class]++
		if _, seen := r.first[class]; !seen {
			r.first[class] = at
		}
	}
	r.check(at)
}

func (r *replicaCount) check(at time.Time) {
	if r.reached != nil && r.count[r.class] >= r.want {
		r.reached <- at
		r.reached = nil
	}
}

// waitFor returns the time at which n replicas were of class.
func (r *replicaCount) waitFor(n, class int, timeout time.Duration) (time.Time, error) {
	reached := make(chan time.Time, 1)
	r.mu.Lock()
	r.want, r.class, r.reached = n, class, reached
	r.check(time.Now())
	r.mu.Unlock()
	select {
	case at := <-reached:
		return at, nil
	case <-time.After(timeout):
		r.mu.Lock()
		defer r.mu.Unlock()
		r.reached = nil
		return time.Time{}, fmt.Errorf("timed out after %s with %d of %d replicas of class %d", timeout, r.count[class], n, class)
	}
}

// firstSeen is when a replica of class was first seen (zero: never).
func (r *replicaCount) firstSeen(class int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first[class]
}

// firstSeenOf is when a replica of template version v was first seen (zero:
// never), with its rollout status or without (propagated).
func (r *replicaCount) firstSeenOf(v int) time.Time {
	with, without := r.firstSeen(v), r.firstSeen(withoutRolloutStatus(v))
	if with.IsZero() || !without.IsZero() && without.Before(with) {
		return without
	}
	return with
}

// propagated classes a replica by the version its template carries
// (templateVersion) once it carries a rollout status too: the hub writes
// status.rolloutStatus on every replica (a patch of the status subresource,
// which a replica's create cannot carry), so a replica is propagated when it
// has both. Before that its class is withoutRolloutStatus of the version.
func propagated(p *policyv1.Policy) int {
	if p.Status.RolloutStatus == "" {
		return withoutRolloutStatus(templateVersion(p))
	}
	return templateVersion(p)
}

// withoutRolloutStatus is propagated's class of a replica of template version
// v that carries no rollout status yet.
func withoutRolloutStatus(v int) int { return -100 - v }

// templateVersion is the "version" the bench's template carries, -1 if none.
func templateVersion(p *policyv1.Policy) int {
	if len(p.Spec.PolicyTemplates) == 0 || p.Spec.PolicyTemplates[0] == nil {
		return -1
	}
	const key = `"version":"`
	raw := string(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
	i := strings.Index(raw, key)
	if i < 0 {
		return -1
	}
	digits, _, ok := strings.Cut(raw[i+len(key):], `"`)
	version, err := strconv.Atoi(digits)
	if !ok || err != nil {
		return -1
	}
	return version
}
