package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// Event reasons on root policies.
const (
	reasonBindingInvalid     = "BindingInvalid"
	reasonPropagationFailed  = "PropagationFailed"
	reasonClusterNamespace   = "ClusterNamespaceMissing"
	reasonReplicasPropagated = "Propagated"
)

// Propagator reconciles root policies: their replicas and their status.
type Propagator struct {
	Client client.Client
	// Replicas writes replicas as raw JSON and does not decode the server's
	// answer: the informer brings the stored replica back anyway, and skipping
	// the decode saves a third of the hub's CPU per write.
	Replicas rest.Interface
	Recorder events.EventRecorder
	// Writers bounds the replica writes in flight for one root policy.
	Writers int
}

// replicaWrite is one write a reconcile decided on.
type replicaWrite struct {
	desired *policyv1.Policy // nil for a delete
	actual  *policyv1.Policy // nil for a create
}

// Reconcile brings one root policy's replicas and status in line with its bindings.
func (p *Propagator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	start := time.Now()
	logger := log.FromContext(ctx)

	root := &policyv1.Policy{}
	if err := p.Client.Get(ctx, req.NamespacedName, root); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		root = nil
	}
	if root != nil && (replication.IsReplica(root) || !root.DeletionTimestamp.IsZero()) {
		if replication.IsReplica(root) {
			return ctrl.Result{}, nil
		}
		root = nil
	}

	existing, err := p.replicasOf(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}

	var resolution *binding.Resolution
	var sets []policyv1beta1.PolicySet
	if root != nil {
		var bindings []policyv1.PlacementBinding
		sets, bindings, err = p.bindingInputs(ctx, root)
		if err != nil {
			return ctrl.Result{}, err
		}
		decisions, err := p.decisions(ctx, root.Namespace, bindings)
		if err != nil {
			return ctrl.Result{}, err
		}
		resolution, err = binding.Resolve(root, sets, bindings, decisions)
		if err != nil {
			// Bad input: keep every replica as it is and say why on the root. A fix
			// to the binding enqueues the root again.
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonBindingInvalid, "Propagate", "%v", err)
			reconcileTotal.WithLabelValues("invalid").Inc()
			return ctrl.Result{}, nil
		}
	}

	writes := p.plan(root, resolution, sets, existing)
	writeErr := p.write(ctx, root, writes)
	if root == nil {
		replicasPerPolicy.DeleteLabelValues(req.Namespace, req.Name)
		reconcileTotal.WithLabelValues(outcome(writeErr)).Inc()
		return ctrl.Result{}, writeErr
	}
	replicasPerPolicy.WithLabelValues(root.Namespace, root.Name).Set(float64(len(resolution.Clusters)))
	if len(writes) > 0 && writeErr == nil {
		propagationSeconds.Observe(time.Since(start).Seconds())
		logger.V(1).Info("propagated", "writes", len(writes), "clusters", len(resolution.Clusters))
	}

	statusErr := p.updateRootStatus(ctx, root, resolution, existing)
	err = errors.Join(writeErr, statusErr)
	reconcileTotal.WithLabelValues(outcome(err)).Inc()
	if err != nil && apierrors.IsConflict(statusErr) && writeErr == nil {
		// The root changed since the cache saw it; its update event is queued.
		return ctrl.Result{Requeue: true}, nil
	}
	return ctrl.Result{}, err
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}

// replicasOf lists a root policy's replicas from the cache, by cluster namespace.
func (p *Propagator) replicasOf(ctx context.Context, root types.NamespacedName) (map[string]*policyv1.Policy, error) {
	list := &policyv1.PolicyList{}
	if err := p.Client.List(ctx, list, client.MatchingFields{indexReplicaRoot: replication.Name(root.Namespace, root.Name)}); err != nil {
		return nil, err
	}
	out := make(map[string]*policyv1.Policy, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Namespace] = &list.Items[i]
	}
	return out, nil
}

// bindingInputs returns the PolicySets of the root's namespace and the bindings
// that name the root or one of the sets containing it.
func (p *Propagator) bindingInputs(ctx context.Context, root *policyv1.Policy) ([]policyv1beta1.PolicySet, []policyv1.PlacementBinding, error) {
	sets := &policyv1beta1.PolicySetList{}
	if err := p.Client.List(ctx, sets, client.InNamespace(root.Namespace)); err != nil {
		return nil, nil, err
	}
	subjects := []string{kindName("Policy", root.Name)}
	for _, set := range sets.Items {
		for _, member := range set.Spec.Policies {
			if string(member) == root.Name {
				subjects = append(subjects, kindName("PolicySet", set.Name))
				break
			}
		}
	}
	seen := map[string]bool{}
	var bindings []policyv1.PlacementBinding
	for _, subject := range subjects {
		list := &policyv1.PlacementBindingList{}
		if err := p.Client.List(ctx, list, client.InNamespace(root.Namespace), client.MatchingFields{indexBindingSubject: subject}); err != nil {
			return nil, nil, err
		}
		for _, pb := range list.Items {
			if !seen[pb.Name] {
				seen[pb.Name] = true
				bindings = append(bindings, pb)
			}
		}
	}
	return sets.Items, bindings, nil
}

// decisions reads the clusters selected by each placement the bindings reference:
// a Placement's PlacementDecisions, a PlacementRule's status.decisions. A missing
// placement selects nothing.
func (p *Propagator) decisions(ctx context.Context, namespace string, bindings []policyv1.PlacementBinding) (binding.Decisions, error) {
	out := binding.Decisions{}
	for _, pb := range bindings {
		ref := binding.PlacementRef{Kind: pb.PlacementRef.Kind, Name: pb.PlacementRef.Name}
		if _, done := out[ref]; done {
			continue
		}
		var clusters []string
		switch ref.Kind {
		case binding.KindPlacement:
			list := &clusterv1beta1.PlacementDecisionList{}
			if err := p.Client.List(ctx, list, client.InNamespace(namespace),
				client.MatchingFields{indexDecisionPlacement: namespace + "/" + ref.Name}); err != nil {
				return nil, err
			}
			for _, d := range list.Items {
				for _, cd := range d.Status.Decisions {
					clusters = append(clusters, cd.ClusterName)
				}
			}
		case binding.KindPlacementRule:
			rule := &appsv1.PlacementRule{}
			err := p.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, rule)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			for _, d := range rule.Status.Decisions {
				clusters = append(clusters, d.ClusterName)
			}
		}
		out[ref] = clusters
	}
	return out, nil
}

// plan compares the desired replicas with the cached ones and returns the writes.
func (p *Propagator) plan(root *policyv1.Policy, res *binding.Resolution, sets []policyv1beta1.PolicySet, existing map[string]*policyv1.Policy) []replicaWrite {
	var writes []replicaWrite
	bound := map[string]bool{}
	if root != nil && res != nil {
		setIndex := dependency.IndexPolicySets(setPointers(sets))
		for _, c := range res.Clusters {
			bound[c.Name] = true
			desired := replication.Build(root, c.Name, c.RemediationAction, setIndex)
			actual := existing[c.Name]
			if actual == nil || drifted(desired, actual) {
				writes = append(writes, replicaWrite{desired: desired, actual: actual})
			}
		}
	}
	for ns, actual := range existing {
		if !bound[ns] {
			writes = append(writes, replicaWrite{actual: actual})
		}
	}
	return writes
}

func setPointers(sets []policyv1beta1.PolicySet) []*policyv1beta1.PolicySet {
	out := make([]*policyv1beta1.PolicySet, len(sets))
	for i := range sets {
		out[i] = &sets[i]
	}
	return out
}

// write performs the writes with at most p.Writers in flight.
func (p *Propagator) write(ctx context.Context, root *policyv1.Policy, writes []replicaWrite) error {
	if len(writes) == 0 {
		return nil
	}
	workers := max(1, min(p.Writers, len(writes)))
	jobs := make(chan replicaWrite)
	var mu sync.Mutex
	var errs []error
	missingNamespaces := map[string]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range jobs {
				err := p.writeOne(ctx, w)
				if err == nil {
					continue
				}
				mu.Lock()
				if w.desired != nil && apierrors.IsNotFound(err) {
					missingNamespaces[w.desired.Namespace] = true
				} else {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, w := range writes {
		jobs <- w
	}
	close(jobs)
	wg.Wait()

	if root != nil {
		for ns := range missingNamespaces {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonClusterNamespace, "Propagate",
				"cluster namespace %s does not exist; the replica will be created when it does", ns)
		}
		if len(errs) > 0 {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonPropagationFailed, "Propagate",
				"%d of %d replica writes failed: %v", len(errs), len(writes), errs[0])
		}
	}
	if len(missingNamespaces) > 0 {
		errs = append(errs, fmt.Errorf("%d cluster namespaces missing", len(missingNamespaces)))
	}
	return errors.Join(errs...)
}

func (p *Propagator) writeOne(ctx context.Context, w replicaWrite) error {
	switch {
	case w.desired == nil:
		err := p.Client.Delete(ctx, w.actual)
		replicaWrites.WithLabelValues("delete").Inc()
		return client.IgnoreNotFound(err)
	case w.actual == nil:
		replicaWrites.WithLabelValues("create").Inc()
		body, err := json.Marshal(w.desired)
		if err != nil {
			return err
		}
		err = p.Replicas.Post().Namespace(w.desired.Namespace).Resource("policies").Body(body).Do(ctx).Error()
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache was behind; the create event brings the replica back here
		}
		return err
	default:
		w.desired.ResourceVersion = w.actual.ResourceVersion
		replicaWrites.WithLabelValues("update").Inc()
		body, err := json.Marshal(w.desired)
		if err != nil {
			return err
		}
		return p.Replicas.Put().Namespace(w.desired.Namespace).Resource("policies").Name(w.desired.Name).Body(body).Do(ctx).Error()
	}
}

// updateRootStatus writes placement[], status[] and compliant when they changed.
func (p *Propagator) updateRootStatus(ctx context.Context, root *policyv1.Policy, res *binding.Resolution, existing map[string]*policyv1.Policy) error {
	observed := make(map[string]policyv1.ComplianceState, len(existing))
	for ns, replica := range existing {
		observed[ns] = replica.Status.ComplianceState
	}
	perCluster, compliant := res.RootStatus(observed)
	status := root.Status.DeepCopy()
	status.Placement = res.Placements
	status.Status = perCluster
	status.ComplianceState = compliant
	if equality.Semantic.DeepEqual(*status, root.Status) {
		return nil
	}
	updated := root.DeepCopy()
	updated.Status = *status
	return p.Client.Status().Update(ctx, updated)
}
