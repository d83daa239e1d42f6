package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// floorWriterFlag makes this command the floor of one propagation run (see
// runFloorWriter) instead of the benchmark; the benchmark starts it.
const floorWriterFlag = "floor-writer"

// pureWriteFlag makes the floor writer write only (runPureWriter).
const pureWriteFlag = "pure-write"

// floorWriterArgs are the floor of one propagation run: its kubeconfig, run,
// P×N and writers, and whether it only writes.
type floorWriterArgs struct {
	kubeconfig         string
	run                string
	policies, clusters int
	writers            int
	pureWrite          bool
}

// runFloorWriter is the least a process that keeps a root's replicas in line
// must do, and the floor the hub's time, CPU and memory are measured against: it
// watches the run's replicas through a controller-runtime cache (managed fields
// stripped, as the hub's), creates them with raw JSON POSTs from writers
// goroutines without client-side rate limit and without decoding the answers,
// each followed by the patch of its rollout status (patchRolloutStatus),
// waits until its cache holds them all, then updates them all with one PUT each
// from the resourceVersion in its cache, and waits again. It prints "creating"
// and "updating" on stdout as each phase starts, and at the end "peak-rss" with
// its peak RSS in bytes. With pureWrite it is runPureWriter instead.
func runFloorWriter(a floorWriterArgs) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", a.kubeconfig)
	if err != nil {
		return err
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if a.pureWrite {
		return runPureWriter(ctx, cfg, a)
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{runLabel: a.run})})
	if err != nil {
		return err
	}
	informer, err := c.GetInformer(ctx, &policyv1.Policy{})
	if err != nil {
		return err
	}
	seen := newReplicaCount(propagated)
	record := func(obj any) {
		if p, ok := obj.(*policyv1.Policy); ok && replication.IsReplica(p) {
			seen.see(p, false, time.Now())
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) },
	}); err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the cache did not sync")
	}
	raw := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient()
	n := a.policies * a.clusters
	write := func(version int, update bool) error {
		return writeReplicas(a, version, func(i int, p *policyv1.Policy) error {
			path := replicasPath(p)
			if update {
				cached := &policyv1.Policy{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(p), cached); err != nil {
					return err
				}
				p.ResourceVersion = cached.ResourceVersion
			}
			body, err := json.Marshal(p)
			if err != nil {
				return err
			}
			if update {
				return raw.Put().AbsPath(path, p.Name).Body(body).Do(ctx).Error()
			}
			if err := raw.Post().AbsPath(path).Body(body).Do(ctx).Error(); err != nil {
				return err
			}
			return patchRolloutStatus(ctx, raw, p).Error()
		})
	}
	fmt.Println("creating")
	if err := write(1, false); err != nil {
		return err
	}
	if _, err := seen.waitFor(n, 1, waitTimeout(n)); err != nil {
		return err
	}
	fmt.Println("updating")
	if err := write(2, true); err != nil {
		return err
	}
	if _, err = seen.waitFor(n, 2, waitTimeout(n)); err != nil {
		return err
	}
	peak, err := localplane.PeakRSS(os.Getpid())
	fmt.Println("peak-rss", peak)
	return err
}

// runPureWriter is the pure-write floor: the least any process writing the
// run's replicas must do, with nothing watched. It creates the replicas with
// raw JSON POSTs from a.writers goroutines without client-side rate limit,
// each followed by the patch of its rollout status (patchRolloutStatus), of
// whose answer it keeps only the resourceVersion; waits for a line on stdin
// (the benchmark's watch has seen them all); then updates each with one PUT
// from that resourceVersion. It prints "creating" and "updating" as each phase
// starts and "peak-rss" at the end, as runFloorWriter.
func runPureWriter(ctx context.Context, cfg *rest.Config, a floorWriterArgs) error {
	raw := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient()
	resourceVersions := make([]string, a.policies*a.clusters)
	fmt.Println("creating")
	if err := writeReplicas(a, 1, func(i int, p *policyv1.Policy) error {
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if err := raw.Post().AbsPath(replicasPath(p)).Body(body).Do(ctx).Error(); err != nil {
			return err
		}
		answer, err := patchRolloutStatus(ctx, raw, p).Raw()
		if err != nil {
			return err
		}
		var patched struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(answer, &patched); err != nil {
			return err
		}
		resourceVersions[i] = patched.Metadata.ResourceVersion
		return nil
	}); err != nil {
		return err
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for the benchmark to see the creates: %w", err)
	}
	fmt.Println("updating")
	if err := writeReplicas(a, 2, func(i int, p *policyv1.Policy) error {
		p.ResourceVersion = resourceVersions[i]
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		return raw.Put().AbsPath(replicasPath(p), p.Name).Body(body).Do(ctx).Error()
	}); err != nil {
		return err
	}
	peak, err := localplane.PeakRSS(os.Getpid())
	fmt.Println("peak-rss", peak)
	return err
}

// writeReplicas calls write with every replica of the run at version (built by
// shared/replication, as the hub builds it), from a.writers goroutines; i
// numbers the replica.
func writeReplicas(a floorWriterArgs, version int, write func(i int, p *policyv1.Policy) error) error {
	names := rootNames(a.run, a.policies)
	roots := make([]*policyv1.Policy, len(names))
	for j, name := range names {
		roots[j] = rootPolicy(name, a.run, version)
	}
	return (&bench{writers: a.writers}).parallel(a.policies*a.clusters, func(i int) error {
		return write(i, replication.Build(roots[i/a.clusters], clusterName(i%a.clusters), policyv1.Inform, nil))
	})
}

// patchRolloutStatus sets the rollout status the hub gives every replica of
// a root with the default rollout (All) on a replica just created, as the hub
// does: a merge patch of status.rolloutStatus on its status subresource (its
// create cannot carry it).
func patchRolloutStatus(ctx context.Context, raw rest.Interface, p *policyv1.Policy) rest.Result {
	return raw.Patch(types.MergePatchType).AbsPath(replicasPath(p), p.Name, "status").
		Body([]byte(`{"status":{"rolloutStatus":"` + string(policyv1.RolloutProgressing) + `"}}`)).Do(ctx)
}

// replicasPath is the collection path of a replica's namespace.
func replicasPath(p *policyv1.Policy) string {
	return "/apis/policy.open-cluster-management.io/v1/namespaces/" + p.Namespace + "/policies"
}

// floorProcess is a floor writer running as a child process.
type floorProcess struct {
	cmd    *exec.Cmd
	phases *bufio.Scanner
	// proceed is its stdin: a line on it lets a pure-write floor update.
	proceed io.WriteCloser
}

// startFloorWriter starts this command as the floor of run; pureWrite: the
// pure-write floor (runPureWriter).
func (b *bench) startFloorWriter(sc scenario, run string, pureWrite bool) (*floorProcess, error) {
	return b.startFloorProcess(floorWriterFlag, "--run", run,
		"--policies", strconv.Itoa(sc.policies), "--clusters-per-policy", strconv.Itoa(sc.clusters),
		"--floor-writers", strconv.Itoa(b.writers), "--"+pureWriteFlag+"="+strconv.FormatBool(pureWrite))
}

// startFloorProcess starts this command as a floor (flag, one of
// floorWriterFlag and churnFloorFlag) against the bench plane, with args; its
// stdout says the phases it starts.
func (b *bench) startFloorProcess(flag string, args ...string) (*floorProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{"--" + flag, "--kubeconfig", b.plane.KubeconfigPath}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &floorProcess{cmd: cmd, phases: bufio.NewScanner(out), proceed: in}, nil
}

// next waits for the floor writer to start its next phase, and says when.
func (f *floorProcess) next(want string) (time.Time, error) {
	if !f.phases.Scan() {
		_, _, err := f.wait()
		return time.Time{}, fmt.Errorf("the floor writer ended before %s: %v", want, err)
	}
	if got := f.phases.Text(); got != want {
		return time.Time{}, fmt.Errorf("the floor writer says %q, want %q", got, want)
	}
	return time.Now(), nil
}

// wait waits for the floor writer to end and returns its CPU time and peak RSS.
func (f *floorProcess) wait() (cpu time.Duration, rssBytes int64, err error) {
	for f.phases.Scan() {
		if value, ok := strings.CutPrefix(f.phases.Text(), "peak-rss "); ok {
			rssBytes, _ = strconv.ParseInt(value, 10, 64)
		}
	}
	if err := f.cmd.Wait(); err != nil {
		return 0, 0, err
	}
	if ru, ok := f.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpu, rssBytes, nil
}

// kill stops a floor writer that is still running.
func (f *floorProcess) kill() {
	if f.cmd.ProcessState == nil {
		_ = f.cmd.Process.Kill()
		_ = f.cmd.Wait()
	}
}
