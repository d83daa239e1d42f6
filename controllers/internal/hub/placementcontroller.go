package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// PlacementWebhookConfiguration is the name of the MutatingWebhookConfiguration
// whose failurePolicy the hub keeps in step with the placement policies.
const PlacementWebhookConfiguration = "fleetpolicy-placement"

// PlacementController is the leader's side of policy-based placement. After every
// change of the placement policies or of the cluster inventory it
//   - writes each policy ConfigMap's status annotation;
//   - sets the webhook's failurePolicy to Fail while policies exist and to Ignore
//     when none does;
//   - remediates: re-evaluates every root Policy and Placement and patches the
//     placement annotations, so that propagation follows (a cluster leaving the
//     allowed set loses its replica).
type PlacementController struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Timeout   time.Duration

	engine *placementEngine
}

// Reconcile runs after each change the engine signals (one request for all).
func (r *PlacementController) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	if !r.engine.Ready() {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	err := errors.Join(r.writeStatuses(ctx), r.setFailurePolicy(ctx), r.remediate(ctx))
	return ctrl.Result{}, err
}

func (r *PlacementController) writeStatuses(ctx context.Context) error {
	var errs []error
	for _, s := range r.engine.Statuses() {
		cm := &corev1.ConfigMap{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: placement.Namespace, Name: s.ConfigMap}, cm); err != nil {
			errs = append(errs, client.IgnoreNotFound(err))
			continue
		}
		want := s.Annotation()
		if cm.Annotations[placement.StatusAnnotation] == want {
			continue
		}
		patch := client.MergeFrom(cm.DeepCopy())
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[placement.StatusAnnotation] = want
		errs = append(errs, r.Client.Patch(ctx, cm, patch))
	}
	return errors.Join(errs...)
}

// setFailurePolicy keeps the webhook failing closed exactly while placement
// policies exist. A missing webhook configuration is not an error (the webhook
// is optional).
func (r *PlacementController) setFailurePolicy(ctx context.Context) error {
	want := admissionregistrationv1.Ignore
	if r.engine.evaluator.HasPolicies() {
		want = admissionregistrationv1.Fail
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: PlacementWebhookConfiguration}, cfg); err != nil {
		return client.IgnoreNotFound(err)
	}
	changed := false
	for i := range cfg.Webhooks {
		if fp := cfg.Webhooks[i].FailurePolicy; fp == nil || *fp != want {
			cfg.Webhooks[i].FailurePolicy = &want
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return r.Client.Update(ctx, cfg)
}

// remediate re-evaluates every governed resource and patches its annotations.
func (r *PlacementController) remediate(ctx context.Context) error {
	var resources []*unstructured.Unstructured
	policies := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, policies); err != nil {
		return err
	}
	for i := range policies.Items {
		if p := &policies.Items[i]; !replication.IsReplica(p) {
			u, err := toUnstructured(p, policyv1.GroupVersion.WithKind("Policy"))
			if err != nil {
				return err
			}
			resources = append(resources, u)
		}
	}
	placements := &clusterv1beta1.PlacementList{}
	if err := r.Client.List(ctx, placements); err != nil {
		return err
	}
	for i := range placements.Items {
		u, err := toUnstructured(&placements.Items[i], schema.GroupVersionKind{Group: clusterv1beta1.GroupName, Version: "v1beta1", Kind: "Placement"})
		if err != nil {
			return err
		}
		resources = append(resources, u)
	}
	var errs []error
	for _, u := range resources {
		errs = append(errs, r.remediateOne(ctx, u))
	}
	return errors.Join(errs...)
}

func (r *PlacementController) remediateOne(ctx context.Context, u *unstructured.Unstructured) error {
	evalCtx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	result, err := r.engine.evaluator.Evaluate(evalCtx, u.Object)
	if err != nil {
		r.Recorder.Eventf(u, nil, corev1.EventTypeWarning, reasonPlacementDenied, "Remediate",
			"placement policies could not be evaluated; placement left as it is: %v", err)
		return nil
	}
	if result.Denied() {
		msgs := make([]string, len(result.Errors))
		for i, m := range result.Errors {
			msgs[i] = m.String()
		}
		r.Recorder.Eventf(u, nil, corev1.EventTypeWarning, reasonPlacementDenied, "Remediate",
			"placement policies now deny this resource: %s", strings.Join(msgs, "; "))
		return nil
	}
	annotations, changed := result.Apply(u.GetAnnotations())
	if !changed {
		return nil
	}
	patch := client.MergeFrom(u.DeepCopy())
	u.SetAnnotations(annotations)
	if err := r.Client.Patch(ctx, u, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	r.Recorder.Eventf(u, nil, corev1.EventTypeNormal, reasonPlaced, "Remediate", "%s", placedMessage(result))
	return nil
}

func toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
