package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
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

// floorWriterArgs are the floor of one propagation run: its kubeconfig, run,
// P×N and writers.
type floorWriterArgs struct {
	kubeconfig         string
	run                string
	policies, clusters int
	writers            int
}

// runFloorWriter is the least a process that keeps a root's replicas in line
// must do, and the floor the hub's time, CPU and memory are measured against: it
// watches the run's replicas through a controller-runtime cache (managed fields
// stripped, as the hub's), creates them with raw JSON POSTs from writers
// goroutines without client-side rate limit and without decoding the answers,
// waits until its cache holds them all, then updates them all with one PUT each
// from the resourceVersion in its cache, and waits again. It prints "creating"
// and "updating" on stdout as each phase starts, and at the end "peak-rss" with
// its peak RSS in bytes.
func runFloorWriter(a floorWriterArgs) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", a.kubeconfig)
	if err != nil {
		return err
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{runLabel: a.run})})
	if err != nil {
		return err
	}
	informer, err := c.GetInformer(ctx, &policyv1.Policy{})
	if err != nil {
		return err
	}
	seen := newReplicaCount(templateVersion)
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
	rest := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient()
	names := rootNames(a.run, a.policies)
	n := a.policies * a.clusters
	write := func(version int, update bool) error {
		roots := make([]*policyv1.Policy, len(names))
		for j, name := range names {
			roots[j] = rootPolicy(name, a.run, version)
		}
		return (&bench{writers: a.writers}).parallel(n, func(i int) error {
			p := replication.Build(roots[i/a.clusters], clusterName(i%a.clusters), policyv1.Inform, nil)
			path := "/apis/policy.open-cluster-management.io/v1/namespaces/" + p.Namespace + "/policies"
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
				return rest.Put().AbsPath(path, p.Name).Body(body).Do(ctx).Error()
			}
			return rest.Post().AbsPath(path).Body(body).Do(ctx).Error()
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

// floorProcess is a floor writer running as a child process.
type floorProcess struct {
	cmd    *exec.Cmd
	phases *bufio.Scanner
}

// startFloorWriter starts this command as the floor of run.
func (b *bench) startFloorWriter(sc scenario, run string) (*floorProcess, error) {
	return b.startFloorProcess(floorWriterFlag, "--run", run,
		"--policies", strconv.Itoa(sc.policies), "--clusters-per-policy", strconv.Itoa(sc.clusters),
		"--floor-writers", strconv.Itoa(b.writers))
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
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &floorProcess{cmd: cmd, phases: bufio.NewScanner(out)}, nil
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
