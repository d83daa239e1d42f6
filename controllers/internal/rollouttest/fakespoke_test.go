package rollouttest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// behaviour is how a fake cluster answers a replica.
type behaviour int

const (
	healthy behaviour = iota // compliant once enforced; non-compliant while only informed
	failing                  // non-compliant whatever it is asked
	silent                   // never reports
)

// wire is the status format a fake cluster reports in.
type wire int

const (
	fleetpolicyWire wire = iota // fleetpolicy's spoke: status.observedGeneration
	// ocmWire is OCM's governance-policy-framework-addon: no observedGeneration,
	// a details entry per template whose history's newest event is the
	// evaluation (lastTimestamp in whole seconds, the client-go event name with
	// the time in hex nanoseconds).
	ocmWire
	// staleOCMWire is ocmWire whose history never gets a newer event than one
	// from before the test: an add-on whose controller stopped evaluating.
	staleOCMWire
)

// fakeSpoke plays the spoke's status sync for the hub's rollout tests: it watches
// the replicas of one root policy on the hub and, after a delay, writes the
// compliance a real spoke would report for the replica's current generation, in
// the status format of fleetpolicy's spoke or of OCM's framework add-on (wire). It
// records the order in which clusters were first switched to enforce, and how
// many times each was switched. It is a test double for the spoke controller,
// which has its own tests against a real spoke API server.
type fakeSpoke struct {
	c         client.Client
	root      string
	delay     time.Duration
	wire      wire
	mu        sync.Mutex
	behaviour map[string]behaviour
	reported  map[string]bool   // replica generation and action already reported (OCM wires)
	enforced  []string          // clusters in the order they were first seen enforced
	switches  map[string]int    // inform -> enforce switches seen per cluster
	lastSeen  map[string]string // last remediationAction seen per cluster
	seenAt    map[string]time.Time
}

func newFakeSpoke(c client.Client, rootNamespace, rootName string, delay time.Duration) *fakeSpoke {
	return &fakeSpoke{
		c: c, root: replication.Name(rootNamespace, rootName), delay: delay,
		behaviour: map[string]behaviour{}, switches: map[string]int{},
		lastSeen: map[string]string{}, seenAt: map[string]time.Time{}, reported: map[string]bool{},
	}
}

func (f *fakeSpoke) set(cluster string, b behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.behaviour[cluster] = b
}

// run reports until ctx ends.
func (f *fakeSpoke) run(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		list := &policyv1.PolicyList{}
		if err := f.c.List(ctx, list, client.MatchingLabels{replication.LabelRootPolicy: f.root}); err != nil {
			continue
		}
		for i := range list.Items {
			f.observe(ctx, &list.Items[i])
		}
	}
}

func (f *fakeSpoke) observe(ctx context.Context, r *policyv1.Policy) {
	cluster := r.Namespace
	action := strings.ToLower(string(r.Spec.RemediationAction))
	f.mu.Lock()
	if f.lastSeen[cluster] != action {
		if action == "enforce" {
			if f.switches[cluster] == 0 {
				f.enforced = append(f.enforced, cluster)
			}
			f.switches[cluster]++
		}
		f.lastSeen[cluster] = action
	}
	b := f.behaviour[cluster]
	if _, ok := f.seenAt[key(r)]; !ok {
		f.seenAt[key(r)] = time.Now()
	}
	ready := time.Since(f.seenAt[key(r)]) >= f.delay
	done := r.Status.ObservedGeneration == r.Generation
	if f.wire != fleetpolicyWire {
		done = f.reported[key(r)+"/"+action]
	}
	f.mu.Unlock()
	if b == silent || !ready || done {
		return
	}
	compliance := policyv1.NonCompliant
	if b == healthy && action == "enforce" {
		compliance = policyv1.Compliant
	}
	r.Status.ComplianceState = compliance
	if f.wire == fleetpolicyWire {
		r.Status.ObservedGeneration = r.Generation
		_ = f.c.Status().Update(ctx, r)
		return
	}
	evaluated := time.Now()
	if f.wire == staleOCMWire {
		evaluated = staleEvaluation
	}
	r.Status.Details = []*policyv1.DetailsPerTemplate{{
		TemplateMeta:    metav1.ObjectMeta{Name: "p"},
		ComplianceState: compliance,
		History: []policyv1.ComplianceHistory{{
			LastTimestamp: metav1.NewTime(evaluated.Truncate(time.Second)),
			EventName:     fmt.Sprintf("%s.%x", r.Name, evaluated.UnixNano()),
			Message:       string(compliance) + "; fake evaluation",
		}},
	}}
	if f.c.Status().Update(ctx, r) == nil {
		f.mu.Lock()
		f.reported[key(r)+"/"+action] = true
		f.mu.Unlock()
	}
}

// staleEvaluation is the only evaluation staleOCMWire ever reports: long before
// any rollout of the tests.
var staleEvaluation = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// key names a replica's generation: the delay counts from when it was first seen.
func key(r *policyv1.Policy) string {
	return r.Namespace + "/" + strconv.FormatInt(r.Generation, 10)
}

func (f *fakeSpoke) enforcedOrder() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.enforced...)
}

func (f *fakeSpoke) switchCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.switches {
		out[k] = v
	}
	return out
}
