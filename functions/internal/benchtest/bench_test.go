// Package benchtest benchmarks every KRM function of the repository on 1,000 and
// 10,000 objects, alone (the binary on a ResourceList) and under the real
// `kustomize build`, each next to the identity function on the same input in
// the same run: the figure is the ratio (target ≤ 1.5×). Alone, each function
// is also compared with the identity on the function's own output, which
// writes as much YAML as the function does; under kustomize, with a replay of
// the function's output: what a function costs beyond either is its own work.
// BenchmarkKitAgainstSDK (kit_test.go) holds package krm, the kit every
// function is built on, to the kpt SDK's own identity function.
// `make bench` runs it; kustomize on 10,000 objects (over a minute per build of
// kustomize's own time) runs only with FLEETPOLICY_BENCH_FULL=1.
package benchtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// input is a package of n objects for one function, and its functionConfig.
type input struct {
	function string
	items    func(n int) string
	config   string
}

var inputs = []input{
	{function: "validate-dependencies", items: dependencyChains, config: config("ValidateDependencies", "")},
	{function: "expand-operator-policy", items: operatorPolicies,
		config: config("ExpandOperatorPolicy", "mode: olm\n")},
	{function: "check-placement", items: placedPolicies, config: config("CheckPlacement", "")},
	{function: "plan-rollout", items: rolloutFleet, config: config("PlanRollout", "")},
}

func config(kind, fields string) string {
	return "apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: bench}\n" + fields
}

func BenchmarkFunctions(b *testing.B) {
	identity := krmtest.BuildFunction(b, "internal/krmtest/identity")
	kustomize := krmtest.Kustomize(b)
	for _, in := range inputs {
		binary := krmtest.BuildFunction(b, in.function)
		for _, n := range []int{1000, 10000} {
			items := []byte(in.items(n))
			config := []byte(in.config)
			rl := resourceList(items, config)
			b.Run(fmt.Sprintf("%s/%d/alone", in.function, n), func(b *testing.B) {
				out := runBinary(b, binary, rl)
				b.Logf("output %d bytes, input %d bytes (%.2f×)", len(out), len(rl), float64(len(out))/float64(len(rl)))
				times := alternate(b,
					func() { runBinary(b, binary, rl) },
					func() { runBinary(b, identity, rl) },
					func() { runBinary(b, identity, out) })
				report(b, times[0], times[1])
				// The identity on the function's output reads and writes as
				// much YAML as the function writes: a function whose output is
				// larger than its input (the objects it adds, the annotations
				// it sets) spends that difference in YAML encoding alone.
				b.ReportMetric(times[2].Seconds(), "output-identity-s/run")
				b.ReportMetric(float64(times[0])/float64(times[2]), "x-output-identity")
			})
			if n > 1000 && os.Getenv("FLEETPOLICY_BENCH_FULL") == "" {
				continue // kustomize alone spends over a minute on 10,000 objects: opt in
			}
			b.Run(fmt.Sprintf("%s/%d/kustomize", in.function, n), func(b *testing.B) {
				dir := krmtest.WriteKustomization(b, binary, items, config)
				identityDir := krmtest.WriteKustomization(b, identity, items, config)
				replayDir := krmtest.WriteKustomization(b, replayOf(b, kustomize, binary, items, config), items, config)
				times := alternate(b,
					func() { krmtest.KustomizeBuild(b, kustomize, dir) },
					func() { krmtest.KustomizeBuild(b, kustomize, identityDir) },
					func() { krmtest.KustomizeBuild(b, kustomize, replayDir) })
				report(b, times[0], times[1])
				// The replay writes, without computing it, what the function
				// writes under kustomize: the build's time beyond it is the
				// function's own; the replay's time beyond the identity's is
				// what kustomize spends on the function's output (objects the
				// function adds or replaces cost kustomize more than objects it
				// passes through).
				b.ReportMetric(times[2].Seconds(), "replay-s/run")
				b.ReportMetric(float64(times[0])/float64(times[2]), "x-replay")
			})
		}
	}
}

// replayOf returns an exec function that writes, whatever it reads, the
// ResourceList binary writes under kustomize for these items and config: it
// runs kustomize once with binary behind a script that keeps what binary
// writes, and writes a script that replays it.
func replayOf(b *testing.B, kustomize, binary string, items, config []byte) string {
	dir := b.TempDir()
	kept, capture, replay := dir+"/output.yaml", dir+"/capture.sh", dir+"/replay.sh"
	writeScript(b, capture, fmt.Sprintf("%q | tee %q\n", binary, kept))
	if built := krmtest.KustomizeBuild(b, kustomize, krmtest.WriteKustomization(b, capture, items, config)); built.Err != nil {
		b.Fatalf("kustomize build: %v\n%s", built.Err, built.Stderr)
	}
	writeScript(b, replay, fmt.Sprintf("cat >/dev/null\nexec cat %q\n", kept))
	return replay
}

func writeScript(b *testing.B, path, body string) {
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCheckPlacementDistinct is check-placement's worst case, alone on
// 10,000 objects: Policies that each ask with annotations of their own, so
// that the policy engine evaluates every one (BenchmarkFunctions' Policies ask
// alike, as a fleet's do, and are answered from the engine's memo). It has no
// target; it shows what the memo saves.
func BenchmarkCheckPlacementDistinct(b *testing.B) {
	identity := krmtest.BuildFunction(b, "internal/krmtest/identity")
	binary := krmtest.BuildFunction(b, "check-placement")
	rl := resourceList([]byte(placedPoliciesAsking(10000, true)), []byte(config("CheckPlacement", "")))
	b.Run("10000/alone", func(b *testing.B) {
		times := alternate(b,
			func() { runBinary(b, binary, rl) },
			func() { runBinary(b, identity, rl) })
		report(b, times[0], times[1])
	})
}

// alternate runs each of runs in turn, b.N rounds, so that all see the same
// machine, and returns each one's mean time per run.
func alternate(b *testing.B, runs ...func()) []time.Duration {
	total := make([]time.Duration, len(runs))
	for range b.N {
		for i, run := range runs {
			start := time.Now()
			run()
			total[i] += time.Since(start)
		}
	}
	for i := range total {
		total[i] /= time.Duration(b.N)
	}
	return total
}

// report reports the function's time per run, the identity's, and their ratio.
func report(b *testing.B, function, identity time.Duration) {
	b.ReportMetric(function.Seconds(), "s/run")
	b.ReportMetric(identity.Seconds(), "identity-s/run")
	b.ReportMetric(float64(function)/float64(identity), "x-identity")
}

// runBinary runs binary on the ResourceList rl and returns what it writes.
func runBinary(b *testing.B, binary string, rl []byte) []byte {
	cmd := exec.Command(binary)
	cmd.Stdin = bytes.NewReader(rl)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", binary, err, stderr.String())
	}
	return stdout.Bytes()
}

func resourceList(items, config []byte) []byte {
	var buf bytes.Buffer
	buf.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, doc := range strings.Split(string(items), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		for i, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
			if i == 0 {
				buf.WriteString("- " + line + "\n")
			} else {
				buf.WriteString("  " + line + "\n")
			}
		}
	}
	if len(config) > 0 {
		buf.WriteString("functionConfig:\n")
		for _, line := range strings.Split(strings.TrimRight(string(config), "\n"), "\n") {
			buf.WriteString("  " + line + "\n")
		}
	}
	return buf.Bytes()
}

func policy(ns, name, extra string) string {
	return fmt.Sprintf(`apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: %s
  namespace: %s%s
spec:
  disabled: false
  remediationAction: inform
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata:
        name: %s
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: %s
              namespace: default
`, name, ns, extra, name, name)
}

// dependencyChains: n Policies in chains of 10, each depending on the previous.
func dependencyChains(n int) string {
	var docs []string
	for i := range n {
		extra := ""
		if i%10 != 0 {
			extra = fmt.Sprintf("\n  annotations:\n    chain: \"%d\"", i/10)
		}
		doc := policy("bench", fmt.Sprintf("p-%05d", i), extra)
		if i%10 != 0 {
			doc = strings.Replace(doc, "  policy-templates:", fmt.Sprintf(
				"  dependencies:\n  - {apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: p-%05d, compliance: Compliant}\n  policy-templates:", i-1), 1)
		}
		docs = append(docs, doc)
	}
	return strings.Join(docs, "---\n")
}

// operatorPolicies: n OperatorPolicies, ten per namespace sharing its
// OperatorGroup.
func operatorPolicies(n int) string {
	var docs []string
	for i := range n {
		ns := fmt.Sprintf("ops-%04d", i/10)
		docs = append(docs, fmt.Sprintf(`apiVersion: policy.open-cluster-management.io/v1beta1
kind: OperatorPolicy
metadata:
  name: op-%05d
  namespace: %s
spec:
  remediationAction: enforce
  operatorGroup: {name: og, namespace: %s, targetNamespaces: [%s]}
  subscription:
    name: operator-%05d
    namespace: %s
    channel: stable
    source: catalog
    sourceNamespace: olm
  allowedCSVs: [operator-%05d.v1.0.0]
`, i, ns, ns, ns, i, ns, i))
	}
	return strings.Join(docs, "---\n")
}

// placedPolicies: the EU/PCI Rego placement policy (examples/placement), 100
// ManagedClusters and n-101 Policies that ask for the same placement (EU
// jurisdiction), as a fleet's Policies of one tier do; the policy engine
// answers all but the first from its memo.
func placedPolicies(n int) string { return placedPoliciesAsking(n, false) }

// placedPoliciesAsking is placedPolicies whose Policies, if distinct is set,
// each carry an annotation of their own: every one is evaluated.
func placedPoliciesAsking(n int, distinct bool) string {
	docs := []string{regoPolicy}
	for i := range 100 {
		jurisdiction := "eu"
		if i%2 == 1 {
			jurisdiction = "us"
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata:
  name: cluster-%03d
  labels: {jurisdiction: %s}
spec: {hubAcceptsClient: true}
status:
  clusterClaims: [{name: pci-compliance-level, value: "%d"}]
`, i, jurisdiction, i%4))
	}
	for i := range n - 101 {
		annotations := "\n  annotations:\n    fleetpolicy.io/eu-jurisdiction-required: \"true\"\n    fleetpolicy.io/pci-compliance-level: \"2\""
		if distinct {
			annotations += fmt.Sprintf("\n    bench.fleetpolicy.io/policy: \"%d\"", i)
		}
		docs = append(docs, policy("bench", fmt.Sprintf("p-%05d", i), annotations))
	}
	return strings.Join(docs, "---\n")
}

const regoPolicy = `apiVersion: v1
kind: ConfigMap
metadata:
  name: eu
  namespace: fleetpolicy-placement
  labels: {fleetpolicy.io/placement-policy: rego}
data:
  eu.rego: |
    package fleetpolicy.placement
    requested := object.get(input, ["metadata", "annotations"], {})
    required := object.get(requested, "fleetpolicy.io/eu-jurisdiction-required", "false")
    annotations["placement.fleetpolicy.io/clusters"] := concat(",", sort([name | some name, c in data.clusters; c.labels.jurisdiction == "eu"])) if required == "true"
`

// rolloutFleet: n-3 ManagedClusters, one Placement in decision groups of 100,
// and a progressive Policy bound to it.
func rolloutFleet(n int) string {
	docs := []string{
		strings.Replace(policy("bench", "rollout", ""), "  remediationAction: inform\n  policy-templates:",
			"  remediationAction: enforce\n  rolloutStrategy: {type: ProgressivePerGroup}\n  policy-templates:", 1),
		`apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: fleet, namespace: bench}
spec:
  decisionStrategy:
    groupStrategy: {clustersPerDecisionGroup: 100}
`,
		`apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: rollout, namespace: bench}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: fleet}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: rollout}]
`,
	}
	for i := range n - 3 {
		docs = append(docs, fmt.Sprintf("apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: cluster-%05d\nspec: {hubAcceptsClient: true}\n", i))
	}
	return strings.Join(docs, "---\n")
}
