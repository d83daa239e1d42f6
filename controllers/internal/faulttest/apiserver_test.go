package faulttest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// apiserverPID finds the kube-apiserver process serving plane.
func apiserverPID(t *testing.T, plane *localplane.Plane) int {
	t.Helper()
	u, err := url.Parse(plane.Host())
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, e := range entries {
		raw, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		if !strings.HasSuffix(args[0], "kube-apiserver") {
			continue
		}
		for _, a := range args {
			if a == "--secure-port="+u.Port() {
				var pid int
				fmt.Sscanf(strings.Split(e, "/")[2], "%d", &pid)
				return pid
			}
		}
	}
	t.Fatalf("no kube-apiserver process serves %s", plane.Host())
	return 0
}

// TestHubConvergesAcrossAnAPIServerOutage freezes the hub's API server in the
// middle of a propagation (SIGSTOP: every request hangs, as in an outage) and
// thaws it: the hub converges to every replica, without a restart.
func TestHubConvergesAcrossAnAPIServerOutage(t *testing.T) {
	ctx := context.Background()
	const n = 60
	var clusters []string
	for i := range n {
		cluster := fmt.Sprintf("outage-%02d", i)
		if err := localplane.EnsureCluster(ctx, plane.Client, cluster); err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, cluster)
	}
	startHub(t, false)
	testkit.Apply(t, plane.Client, boundTo("outage", "p", clusters...))
	pid := apiserverPID(t, plane)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		list := &policyv1.PolicyList{}
		err := plane.Client.List(ctx, list, client.MatchingLabels{replication.LabelRootPolicy: "outage.p"})
		if err == nil && len(list.Items) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the outage the hub has %d of %d replicas (%v)", len(list.Items), n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
