package addontest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

// fakeKubelet runs the add-on's Deployment on a managed plane as a process,
// because no kubelet runs pods here (`make e2e` runs the real pods): what the
// work agent applied is what runs. It starts bin/fleetpolicy-spoke with the
// container's args, its Secret volumes projected into files (as a kubelet
// does, following the Secret as OCM rotates it) and the credentials of the
// Deployment's ServiceAccount; starts it again when the Deployment's spec
// changes; stops it when the Deployment is gone; and, while the process
// answers its readiness probe, writes the Deployment's status as a kubelet
// and the deployment controller would (OCM's add-on health reads it).
type fakeKubelet struct {
	t         *testing.T
	plane     *localplane.Plane
	namespace string
	name      string
	dir       string

	mu        sync.Mutex
	proc      *localplane.Process
	gen       int64
	readyz    string
	starts    int // for a new Deployment spec
	crashes   int // the process exited by itself
	projected map[string]bool
}

func startFakeKubelet(ctx context.Context, t *testing.T, plane *localplane.Plane, namespace, name string) *fakeKubelet {
	k := &fakeKubelet{t: t, plane: plane, namespace: namespace, name: name, dir: t.TempDir(), projected: map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := k.sync(ctx); err != nil && ctx.Err() == nil {
				t.Logf("fake kubelet on %s: %v", plane.Name, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		k.stop()
	})
	return k
}

// process is the running spoke, nil when none runs.
func (k *fakeKubelet) process() *localplane.Process {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.proc
}

// startCount is how many times the Deployment was started for a new spec,
// and crashCount how many times its process exited by itself.
func (k *fakeKubelet) startCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.starts
}

func (k *fakeKubelet) crashCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.crashes
}

func (k *fakeKubelet) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.proc != nil {
		k.proc.Stop()
		k.proc = nil
	}
}

func (k *fakeKubelet) sync(ctx context.Context) error {
	d := &appsv1.Deployment{}
	err := k.plane.Client.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: k.name}, d)
	if apierrors.IsNotFound(err) || (err == nil && d.DeletionTimestamp != nil) {
		k.stop()
		k.mu.Lock()
		k.gen = 0
		k.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	k.mu.Lock()
	running := k.proc != nil && k.gen == d.Generation
	k.mu.Unlock()
	if !running {
		k.stop()
		if err := k.start(ctx, d); err != nil {
			return err
		}
		k.mu.Lock()
		k.starts++
		k.mu.Unlock()
	}
	k.mu.Lock()
	readyz, proc := k.readyz, k.proc
	k.mu.Unlock()
	select {
	case <-proc.Exited():
		// A kubelet starts a container that exited again: so does this,
		// counting it.
		k.mu.Lock()
		k.crashes++
		k.proc = nil
		k.mu.Unlock()
		if err := k.start(ctx, d); err != nil {
			return err
		}
		return fmt.Errorf("the spoke exited (code %d), started again; its errors:\n%s", proc.ExitCode(), errorLines(proc.Log()))
	default:
	}
	resp, err := http.Get("http://" + readyz + "/readyz")
	if err != nil {
		return nil // not ready yet
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == 1 {
		return nil
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	return k.plane.Client.Status().Update(ctx, d)
}

// start runs the Deployment's one container as a process.
func (k *fakeKubelet) start(ctx context.Context, d *appsv1.Deployment) error {
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		return fmt.Errorf("deployment %s has %d containers; the fake kubelet runs one", d.Name, len(spec.Containers))
	}
	c := spec.Containers[0]
	mounts := map[string]string{} // mountPath -> local directory
	for _, m := range c.VolumeMounts {
		var secret string
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				secret = v.Secret.SecretName
			}
		}
		if secret == "" {
			return fmt.Errorf("volume %s of deployment %s is not a Secret; the fake kubelet projects Secrets only", m.Name, d.Name)
		}
		dir := filepath.Join(k.dir, "volumes", secret)
		if !k.projected[secret] {
			if err := localplane.ProjectSecret(ctx, k.plane.Client, d.Namespace, secret, dir, time.Second); err != nil {
				return err
			}
			k.projected[secret] = true
		}
		mounts[m.MountPath] = dir
	}
	token, err := localplane.ServiceAccountToken(ctx, k.plane.Client, d.Namespace, spec.ServiceAccountName)
	if err != nil {
		return err
	}
	kubeconfig, err := localplane.TokenKubeconfig(k.plane, spec.ServiceAccountName, token)
	if err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(k.dir, fmt.Sprintf("kubeconfig-%d", d.Generation))
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	metrics, err := localplane.FreeAddress()
	if err != nil {
		return err
	}
	probes, err := localplane.FreeAddress()
	if err != nil {
		return err
	}
	var args []string
	for _, a := range c.Args {
		for mountPath, dir := range mounts {
			a = strings.ReplaceAll(a, mountPath, dir)
		}
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metrics
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probes
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+kubeconfigPath, "--leader-election-namespace="+d.Namespace)
	var env []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
			limit := c.Resources.Limits[corev1.ResourceMemory]
			env = append(env, fmt.Sprintf("%s=%d", e.Name, limit.Value()))
		default:
			return fmt.Errorf("env %s of deployment %s: the fake kubelet resolves values and limits.memory only", e.Name, d.Name)
		}
	}
	proc, err := localplane.StartProcess("fleetpolicy-spoke", "build", args, env)
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.proc, k.gen, k.readyz = proc, d.Generation, probes
	k.mu.Unlock()
	return nil
}

// errorLines are the lines of a process's log that report an error.
func errorLines(log string) string {
	var lines []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"level":"error"`) || strings.HasPrefix(l, "E") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
