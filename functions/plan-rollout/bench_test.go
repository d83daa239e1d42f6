package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// The benchmarks plan 10,000 clusters in 100 decision groups of 100, with the
// clusters given either as PlacementDecisions exported from a hub or as
// ManagedClusters scheduled offline into decisionGroups, and compare the
// function with the identity function (which reads and writes the same
// ResourceList and does nothing else) on the same input, in the same run.
const (
	benchGroups          = 100
	benchClustersByGroup = 100
)

// benchStrategies are the rollouts planned: one wave per group, and one wave per
// cluster (maxConcurrency 1, the plan with the most waves).
var benchStrategies = []struct{ name, yaml string }{
	{"per-group", "type: ProgressivePerGroup\n      progressivePerGroup:\n        minSuccessTime: 5m"},
	{"one-at-a-time", "type: Progressive\n      progressive:\n        minSuccessTime: 5m\n        maxConcurrency: 1"},
}

// benchInputs are the ways the clusters are given.
var benchInputs = []struct {
	name     string
	clusters func(b *strings.Builder)
}{
	{"exported-decisions", exportedDecisions},
	{"scheduled-clusters", managedClusters},
}

// benchResourceList is a ResourceList with one Policy bound to one Placement
// deciding 10,000 clusters in 100 groups.
func benchResourceList(strategy string, clusters func(b *strings.Builder)) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	fmt.Fprintf(&b, `- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata:
    name: fleet-wide
    namespace: policies
  spec:
    disabled: false
    remediationAction: enforce
    rolloutStrategy:
      %s
    policy-templates: []
- apiVersion: policy.open-cluster-management.io/v1
  kind: PlacementBinding
  metadata:
    name: fleet-wide
    namespace: policies
  placementRef:
    apiGroup: cluster.open-cluster-management.io
    kind: Placement
    name: fleet
  subjects:
  - apiGroup: policy.open-cluster-management.io
    kind: Policy
    name: fleet-wide
- apiVersion: cluster.open-cluster-management.io/v1beta1
  kind: Placement
  metadata:
    name: fleet
    namespace: policies
  spec:
    decisionStrategy:
      groupStrategy:
        decisionGroups:
`, strategy)
	for g := range benchGroups {
		fmt.Fprintf(&b, "        - groupName: group-%02d\n          groupClusterSelector:\n            labelSelector:\n              matchLabels:\n                group: g%02d\n", g, g)
	}
	clusters(&b)
	return []byte(b.String())
}

func clusterName(group, i int) string { return fmt.Sprintf("cluster-%02d-%03d", group, i) }

// exportedDecisions writes the PlacementDecisions OCM's scheduler writes for the
// benchmark's Placement.
func exportedDecisions(b *strings.Builder) {
	for g := range benchGroups {
		fmt.Fprintf(b, `- apiVersion: cluster.open-cluster-management.io/v1beta1
  kind: PlacementDecision
  metadata:
    name: fleet-decision-%d
    namespace: policies
    labels:
      cluster.open-cluster-management.io/placement: fleet
      cluster.open-cluster-management.io/decision-group-index: "%d"
      cluster.open-cluster-management.io/decision-group-name: group-%02d
  status:
    decisions:
`, g+1, g, g)
		for i := range benchClustersByGroup {
			fmt.Fprintf(b, "    - clusterName: %s\n      reason: \"\"\n", clusterName(g, i))
		}
	}
}

// managedClusters writes the ManagedClusters the benchmark's Placement is
// scheduled on.
func managedClusters(b *strings.Builder) {
	for g := range benchGroups {
		for i := range benchClustersByGroup {
			fmt.Fprintf(b, `- apiVersion: cluster.open-cluster-management.io/v1
  kind: ManagedCluster
  metadata:
    name: %s
    labels:
      group: g%02d
      vendor: OpenShift
  spec:
    hubAcceptsClient: true
`, clusterName(g, i), g)
		}
	}
}

// identity is the function that changes nothing.
var identity = krm.Function{Name: "identity", Process: func(*fn.ResourceList) error { return nil }}

// BenchmarkPlanRollout runs the function in-process, and the identity function
// on the same input for the floor.
func BenchmarkPlanRollout(b *testing.B) {
	for _, input := range benchInputs {
		for _, strategy := range benchStrategies {
			rl := benchResourceList(strategy.yaml, input.clusters)
			b.Run(input.name+"/"+strategy.name, func(b *testing.B) {
				compareWithFloor(b, func(f krm.Function, out *bytes.Buffer) time.Duration {
					if code := f.Run(bytes.NewReader(rl), out, io.Discard); code != 0 {
						b.Fatalf("%s exited %d:\n%s", f.Name, code, out.String())
					}
					return 0
				})
			})
		}
	}
}

// maxBinarySeconds is the target for planning 10,000 clusters through the
// binary, at any strategy.
const maxBinarySeconds = 2

// BenchmarkPlanRolloutBinary runs the plan-rollout binary, and the identity
// binary on the same input for the floor. Besides the wall time it reports the
// processes' CPU time (user and system), and fails when one plan takes more than
// maxBinarySeconds of wall time AND of CPU: on a loaded machine the wall time is
// inflated, and on 2 idle cores the CPU time exceeds the wall time (the garbage
// collector runs beside the planner); the target is the time a user waits.
func BenchmarkPlanRolloutBinary(b *testing.B) {
	binaries := map[string]string{
		"identity":     krmtest.BuildFunction(b, "internal/krmtest/identity"),
		"plan-rollout": krmtest.BuildFunction(b, "plan-rollout"),
	}
	for _, input := range benchInputs {
		for _, strategy := range benchStrategies {
			rl := benchResourceList(strategy.yaml, input.clusters)
			b.Run(input.name+"/"+strategy.name, func(b *testing.B) {
				wall, cpu := compareWithFloor(b, func(f krm.Function, out *bytes.Buffer) time.Duration {
					cmd := exec.Command(binaries[f.Name])
					cmd.Stdin, cmd.Stdout = bytes.NewReader(rl), out
					if err := cmd.Run(); err != nil {
						b.Fatalf("%s: %v\n%s", f.Name, err, out.String())
					}
					return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				})
				if cpu > maxBinarySeconds*time.Second && wall > maxBinarySeconds*time.Second {
					b.Errorf("plan-rollout took %v (%v of CPU) per plan, more than the %d s target", wall, cpu, maxBinarySeconds)
				}
			})
		}
	}
}

// compareWithFloor runs the identity function and plan-rollout b.N times each,
// alternating, so that both see the same machine; it reports plan-rollout's
// wall time per run (s/run), the identity's (floor-s/run) and their ratio
// (x-identity), and plan-rollout's CPU time per run when run reports one
// (cpu-s/run; the identity's is logged). It checks plan-rollout's last output and returns its wall
// and CPU time per run.
func compareWithFloor(b *testing.B, run func(f krm.Function, out *bytes.Buffer) (cpu time.Duration)) (wall, cpu time.Duration) {
	var elapsed, cpuTime [2]time.Duration // identity, plan-rollout
	var out bytes.Buffer
	for range b.N {
		for i, f := range []krm.Function{identity, planRollout} {
			out.Reset()
			start := time.Now()
			cpuTime[i] += run(f, &out)
			elapsed[i] += time.Since(start)
		}
	}
	checkPlanned(b, out.Bytes())
	n := time.Duration(b.N)
	b.ReportMetric((elapsed[1] / n).Seconds(), "s/run")
	b.ReportMetric((elapsed[0] / n).Seconds(), "floor-s/run")
	b.ReportMetric(float64(elapsed[1])/float64(elapsed[0]), "x-identity")
	if cpuTime[1] > 0 {
		b.ReportMetric((cpuTime[1] / n).Seconds(), "cpu-s/run")
		b.Logf("CPU per run: plan-rollout %v, identity %v", (cpuTime[1] / n).Round(time.Millisecond), (cpuTime[0] / n).Round(time.Millisecond))
	}
	return elapsed[1] / n, cpuTime[1] / n
}

// checkPlanned checks the output of plan-rollout's last run: it must have written
// the plan of 10,000 clusters.
func checkPlanned(b *testing.B, out []byte) {
	b.Helper()
	rl, err := fn.ParseResourceList(out)
	if err != nil {
		b.Fatal(err)
	}
	for _, item := range rl.Items {
		if isRolloutPlan(item) {
			clusters, _, _ := item.NestedSlice("spec", "clusters")
			if want := benchGroups * benchClustersByGroup; len(clusters) != want {
				b.Fatalf("the plan has %d clusters, want %d", len(clusters), want)
			}
			return
		}
	}
	b.Fatal("no RolloutPlan written")
}
