package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/events"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// Paths the hub's webhook server serves.
const (
	MutatePlacementPath = "/mutate-placement"
	ExplainPath         = "/explain"
)

// Event reasons of placement.
const (
	reasonPlaced          = "Placed"
	reasonPlacementDenied = "PlacementDenied"
)

// placementAdmission is the mutating admission webhook for root Policies and
// Placements: it merges the placement policies' annotations into the resource
// and denies it on any policy error. With no placement policy it allows
// everything (fail open); once a policy exists, a failed evaluation denies (fail
// closed). Transient evaluation errors are retried with backoff within the
// request's time.
type placementAdmission struct {
	engine   *placementEngine
	recorder events.EventRecorder
	timeout  time.Duration
	retries  int
	// identity is the username the hub writes replicas as.
	identity string
	// clusters reads ManagedClusters: a replica lives in a cluster's namespace.
	clusters client.Reader
}

// isHubReplica reports whether the request is the hub writing one of its own
// replicas: sent by the hub's identity, a Policy carrying the root-policy label,
// in the namespace of a ManagedCluster. The label alone proves nothing: anyone
// who may write a Policy or a Placement can set it.
func (a *placementAdmission) isHubReplica(ctx context.Context, req admission.Request, obj *unstructured.Unstructured) (bool, error) {
	if a.identity == "" || req.UserInfo.Username != a.identity ||
		req.Kind.Group != policyv1.GroupVersion.Group || req.Kind.Kind != "Policy" || !replication.IsReplica(obj) {
		return false, nil
	}
	err := a.clusters.Get(ctx, client.ObjectKey{Name: req.Namespace}, &clusterv1.ManagedCluster{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (a *placementAdmission) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(req.Object.Raw, &obj.Object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if replica, err := a.isHubReplica(ctx, req, obj); err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err)
	} else if replica {
		return admission.Allowed("replicated policies are placed by their root")
	}
	if !a.engine.WaitReady(ctx) {
		// Whether placement policies exist is not known yet: deny rather than
		// let through what a policy might forbid. (Readiness keeps traffic away
		// from a process that is still loading.)
		return admission.Errored(http.StatusServiceUnavailable, errors.New("the placement engine is loading"))
	}
	if !a.engine.evaluator.HasPolicies() {
		return admission.Allowed("no placement policy")
	}
	result, err := a.evaluate(ctx, obj.Object)
	dryRun := req.DryRun != nil && *req.DryRun
	if err != nil {
		msg := fmt.Sprintf("placement policies could not be evaluated, so the resource is denied (fail closed): %v", err)
		a.event(obj, dryRun, corev1.EventTypeWarning, reasonPlacementDenied, msg)
		return admission.Denied(msg)
	}
	if result.Denied() {
		msgs := make([]string, len(result.Errors))
		for i, m := range result.Errors {
			msgs[i] = m.String()
		}
		msg := "denied by placement policy: " + strings.Join(msgs, "; ")
		a.event(obj, dryRun, corev1.EventTypeWarning, reasonPlacementDenied, msg)
		return admission.Denied(msg)
	}
	annotations, changed := result.Apply(obj.GetAnnotations())
	a.event(obj, dryRun, corev1.EventTypeNormal, reasonPlaced, placedMessage(result))
	if !changed {
		return admission.Allowed("placement unchanged")
	}
	obj.SetAnnotations(annotations)
	patched, err := json.Marshal(obj.Object)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, patched)
}

// evaluate runs the policies within a.timeout, retrying with backoff while the
// error is not the policies' own verdict.
func (a *placementAdmission) evaluate(ctx context.Context, object map[string]any) (placement.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	backoff := 50 * time.Millisecond
	var err error
	for attempt := 0; attempt <= a.retries; attempt++ {
		var result placement.Result
		if result, err = a.engine.evaluator.Evaluate(ctx, object); err == nil {
			return result, nil
		}
		var policyErr *placement.PolicyError
		if errors.As(err, &policyErr) || ctx.Err() != nil {
			return placement.Result{}, err // a broken policy or no time left: retrying cannot help
		}
		select {
		case <-time.After(backoff):
			backoff *= 2
		case <-ctx.Done():
			return placement.Result{}, err
		}
	}
	return placement.Result{}, err
}

func placedMessage(r placement.Result) string {
	clusters, restricted := binding.AllowedClusters(r.Annotations)
	if !restricted {
		return "placement policies allow the resource; they do not restrict its clusters"
	}
	if len(clusters) == 0 {
		return "placement policies allow the resource on no cluster"
	}
	return "placement policies allow the resource on clusters " + r.Annotations[binding.ClustersAnnotation]
}

func (a *placementAdmission) event(obj *unstructured.Unstructured, dryRun bool, kind, reason, msg string) {
	if dryRun || a.recorder == nil {
		return
	}
	a.recorder.Eventf(obj, nil, kind, reason, "Admit", "%s", msg)
}

// explainHandler answers, for a resource POSTed as JSON or YAML, each cluster's
// placement decision and the reasons, without creating anything. It evaluates
// at most cap(slots) requests at once and answers 429 Too Many Requests beyond
// that. The caller is authenticated and authorized before it (see
// serveExplain).
type explainHandler struct {
	engine  *placementEngine
	timeout time.Duration
	slots   chan struct{}
}

// ExplainResponse is the body the explain endpoint answers with.
type ExplainResponse struct {
	Denied      bool              `json:"denied"`
	Errors      []string          `json:"errors,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Clusters    []ExplainCluster  `json:"clusters"`
}

// ExplainCluster is one cluster's decision.
type ExplainCluster struct {
	Name    string   `json:"name"`
	Allowed bool     `json:"allowed"`
	Reasons []string `json:"reasons,omitempty"`
}

func (h *explainHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a resource (JSON or YAML)", http.StatusMethodNotAllowed)
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("%d explanations are being evaluated already; retry later", cap(h.slots)), http.StatusTooManyRequests)
		return
	}
	if !h.engine.Ready() {
		http.Error(w, "the placement engine is loading", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	object := map[string]any{}
	if err := utilyaml.Unmarshal(body, &object); err != nil || len(object) == 0 {
		http.Error(w, fmt.Sprintf("the body is not a resource: %v", err), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	defer cancel()
	result, err := h.engine.evaluator.Explain(ctx, object)
	if err != nil {
		log.FromContext(ctx).Info("explain failed", "error", err.Error())
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	resp := ExplainResponse{Denied: result.Denied(), Annotations: result.Annotations, Clusters: []ExplainCluster{}}
	for _, m := range result.Errors {
		resp.Errors = append(resp.Errors, m.String())
	}
	for _, d := range result.Clusters {
		c := ExplainCluster{Name: d.Cluster, Allowed: d.Allowed}
		for _, reason := range d.Reasons {
			c.Reasons = append(c.Reasons, reason.String())
		}
		resp.Clusters = append(resp.Clusters, c)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}
