package localplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

// OLMCatalogDir is the file-based catalog OLM serves, relative to the
// repository root: the test fixture of controllers/internal/olme2e (its
// README), rendered there from the bundle manifests beside it. Its bundles are
// embedded (image "" and olm.bundle.object properties), so OLM makes no
// bundle unpack Job (which needs a kubelet).
const OLMCatalogDir = "controllers/internal/olme2e/testdata/olm-catalog"

// OLM is the real Operator Lifecycle Manager running against a plane:
// olm-operator and catalog-operator (bin/, `make olm-binaries`), `opm serve`
// serving OLMCatalogDir's catalog to the CatalogSource of its
// catalogsource.yaml, and the stand-in for the deployment controller that a
// bare API server lacks (DeploymentStatusStandIn).
type OLM struct {
	opm, catalog, olm *Process
	stopStandIn       func()
}

// olmReadyTimeout bounds how long StartOLM waits for the CatalogSource.
const olmReadyTimeout = 2 * time.Minute

// StartOLM starts OLM against p and returns once the fixture's CatalogSource is
// READY; it fails when it is not within olmReadyTimeout. Both OLM binaries bind :8080 for metrics and health, with
// no flag to move it: a second one (also of another OLM on this machine) logs
// the bind error and carries on, which is all the tests need of them.
func StartOLM(ctx context.Context, p *Plane) (o *OLM, err error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	catalogDir := filepath.Join(root, OLMCatalogDir)
	if err := EnsureNamespace(ctx, p.Client, "olm"); err != nil {
		return nil, err
	}
	o = &OLM{stopStandIn: func() {}}
	defer func() {
		if err != nil {
			o.Stop()
			o = nil
		}
	}()
	address, err := FreeAddress()
	if err != nil {
		return o, err
	}
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return o, err
	}
	if o.opm, err = StartProcess("opm", "olm-binaries", []string{"serve", filepath.Join(catalogDir, "catalog"),
		"--port", port, "--pprof-addr", "", "--cache-dir", filepath.Join(p.dir, "opm-cache"), "--cache-enforce-integrity=false",
		"--termination-log", filepath.Join(p.dir, "opm-termination-log")}, nil); err != nil {
		return o, err
	}
	kubeconfig := []string{"KUBECONFIG=" + p.KubeconfigPath}
	// OLM resolves a namespace again on its wakeup interval: an upgrade that
	// resolved while the old CSV still existed reports ResolutionFailed
	// (ConstraintsNotSatisfiable) until then, 15 minutes by default.
	if o.catalog, err = StartProcess("catalog-operator", "olm-binaries", []string{"--namespace", "olm", "--interval", "20s"}, kubeconfig); err != nil {
		return o, err
	}
	if o.olm, err = StartProcess("olm-operator", "olm-binaries", []string{"--namespace", "olm"}, kubeconfig); err != nil {
		return o, err
	}
	if o.stopStandIn, err = startDeploymentStatusStandIn(p); err != nil {
		return o, err
	}

	objs, err := ReadManifestFile(filepath.Join(catalogDir, "catalogsource.yaml"))
	if err != nil {
		return o, err
	}
	if len(objs) != 1 {
		return o, fmt.Errorf("%s/catalogsource.yaml: want one object, got %d", OLMCatalogDir, len(objs))
	}
	source := objs[0]
	if err := unstructured.SetNestedField(source.Object, address, "spec", "address"); err != nil {
		return o, err
	}
	if _, err := Apply(ctx, p.Client, objs); err != nil {
		return o, err
	}
	last := "not read yet"
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, olmReadyTimeout, true, func(ctx context.Context) (bool, error) {
		cs := &operatorsv1alpha1.CatalogSource{}
		if err := p.Client.Get(ctx, client.ObjectKeyFromObject(source), cs); err != nil {
			last = err.Error()
			return false, nil
		}
		if cs.Status.GRPCConnectionState == nil || cs.Status.GRPCConnectionState.LastObservedState != "READY" {
			last = fmt.Sprintf("connection state %+v", cs.Status.GRPCConnectionState)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return o, fmt.Errorf("CatalogSource %s is not READY (%s): %w\n%s", source.GetName(), last, err, o.LogTail(10))
	}
	return o, nil
}

// LogTail is the last lines of each OLM process's log, for a failure message.
func (o *OLM) LogTail(lines int) string {
	var out string
	for name, p := range map[string]*Process{"opm": o.opm, "catalog-operator": o.catalog, "olm-operator": o.olm} {
		if p != nil {
			out += fmt.Sprintf("--- %s:\n%s\n", name, p.LogTail(lines))
		}
	}
	return out
}

// Stop ends every OLM process and the stand-in.
func (o *OLM) Stop() {
	o.stopStandIn()
	for _, p := range []*Process{o.olm, o.catalog, o.opm} {
		if p != nil {
			p.Stop()
		}
	}
}

// DeploymentStatusStandIn is a TEST-ONLY stand-in for the deployment
// controller and the kubelet, which a bare API server lacks: it writes the
// status of a Deployment whose pods would all be running, which is what OLM
// waits for before a CSV succeeds.
type DeploymentStatusStandIn struct{ Client client.Client }

// Reconcile writes one Deployment's status as if all its pods ran.
func (d *DeploymentStatusStandIn) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	dep := &appsv1.Deployment{}
	if err := d.Client.Get(ctx, req.NamespacedName, dep); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	replicas := ptr.Deref(dep.Spec.Replicas, 1)
	if dep.Status.ObservedGeneration >= dep.Generation && dep.Status.AvailableReplicas == replicas && dep.Status.UpdatedReplicas == replicas {
		return ctrl.Result{}, nil
	}
	now := metav1.Now()
	dep.Status = appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	return ctrl.Result{}, client.IgnoreNotFound(d.Client.Status().Update(ctx, dep))
}

// startDeploymentStatusStandIn runs a DeploymentStatusStandIn against p in a
// manager of its own and returns what stops it.
func startDeploymentStatusStandIn(p *Plane) (func(), error) {
	mgr, err := ctrl.NewManager(p.Config, ctrl.Options{
		Scheme:                 scheme.New(),
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, err
	}
	// Each plane's OLM has a stand-in of its own, under the same name.
	if err := ctrl.NewControllerManagedBy(mgr).Named("deployment-status-stand-in").
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).
		For(&appsv1.Deployment{}).Complete(&DeploymentStatusStandIn{Client: mgr.GetClient()}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-stopped; err != nil && !errors.Is(err, context.Canceled) {
			ctrl.Log.Error(err, "deployment status stand-in")
		}
	}, nil
}
