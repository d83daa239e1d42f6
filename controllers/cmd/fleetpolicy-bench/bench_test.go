package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

func TestParseScenarios(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []scenario
		err  bool
	}{
		{in: "1x1000, 100x1000", want: []scenario{{1, 1000}, {100, 1000}}},
		{in: "", want: nil},
		{in: "10x3000,", want: []scenario{{10, 3000}}},
		{in: "1000", err: true},
		{in: "0x1000", err: true},
		{in: "1x-5", err: true},
		{in: "1x1000x2", err: true},
		{in: "ax1", err: true},
	} {
		got, err := parseScenarios(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("parseScenarios(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("parseScenarios(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseScenarios(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

func TestParseDurations(t *testing.T) {
	got, err := parseDurations("1s, 100ms")
	if err != nil || len(got) != 2 || got[0] != time.Second || got[1] != 100*time.Millisecond {
		t.Errorf("parseDurations = %v, %v", got, err)
	}
	for _, bad := range []string{"-1s", "fast", "1"} {
		if _, err := parseDurations(bad); err == nil {
			t.Errorf("parseDurations(%q) gave no error", bad)
		}
	}
}

func TestScenarioRunsAndKey(t *testing.T) {
	for _, tc := range []struct {
		sc   scenario
		runs int
		key  string
	}{
		{scenario{1, 1000}, 3, "policies=1/clusters=1000"},
		{scenario{10, 1000}, 3, "policies=10/clusters=1000"}, // exactly 10,000 replicas is not large
		{scenario{10, 3000}, 1, "policies=10/clusters=3000"},
		{scenario{100, 1000}, 1, "policies=100/clusters=1000"},
	} {
		if got := tc.sc.runs(3, 1); got != tc.runs {
			t.Errorf("%v: runs %d, want %d", tc.sc, got, tc.runs)
		}
		if got := tc.sc.key(); got != tc.key {
			t.Errorf("%v: key %q, want %q", tc.sc, got, tc.key)
		}
	}
}

// TestResultLines holds the output to the benchmark line format: one line per
// run, "Benchmark<name> 1 <ns> ns/op" then value-unit pairs, floor and ratio.
func TestResultLines(t *testing.T) {
	var out bytes.Buffer
	r := newResults(&out)
	r.line("HubPropagation/policies=1/clusters=1000/create", 1630*time.Millisecond, withFloor(1.63, 2.11, "s")...)
	r.line("HubPropagation/policies=1/clusters=1000/create", 1700*time.Millisecond, withFloor(1.7, 2.0, "s")...)
	r.line("HubMemory/policies=10/clusters=3000", 0, figure{143, "MiB-peak-rss"})
	r.line("HubRollout/clusters=1000/waves=10/status-batch-delay=1s/wave", 250*time.Millisecond, withFloor(0.25, 0.05, "s/wave")...)
	want := []string{
		"BenchmarkHubPropagation/policies=1/clusters=1000/create 1 1630000000 ns/op 1.630 s 2.110 floor-s 0.7725 x-floor",
		"BenchmarkHubPropagation/policies=1/clusters=1000/create 1 1700000000 ns/op 1.700 s 2.000 floor-s 0.8500 x-floor",
		"BenchmarkHubMemory/policies=10/clusters=3000 1 0 ns/op 143.0 MiB-peak-rss",
		"BenchmarkHubRollout/clusters=1000/waves=10/status-batch-delay=1s/wave 1 250000000 ns/op 0.2500 s/wave 0.0500 floor-s/wave 5.000 x-floor",
	}
	if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var summary bytes.Buffer
	r.summary(&summary)
	if !strings.Contains(summary.String(), "1.700 s  2.110 floor-s  0.8500 x-floor  (2 run(s))") {
		t.Errorf("summary does not hold the medians of the two create runs:\n%s", summary.String())
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 143: "143.0", 1234.5: "1234", 100000: "100000", 12.345: "12.35", 1.5: "1.500", 0.01234: "0.0123", -2: "-2.000",
	} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTemplateVersion(t *testing.T) {
	withTemplate := func(raw string) *policyv1.Policy {
		return &policyv1.Policy{Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}}}}}
	}
	for _, tc := range []struct {
		name string
		p    *policyv1.Policy
		want int
	}{
		{"bench root", rootPolicy("p", "run", 7), 7},
		{"bench replica", replication.Build(rootPolicy("p", "run", 12), "c", policyv1.Inform, nil), 12},
		{"no templates", &policyv1.Policy{}, -1},
		{"nil template", &policyv1.Policy{Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{nil}}}, -1},
		{"no version", withTemplate(`{"data":{}}`), -1},
		{"not a number", withTemplate(`{"data":{"version":"x"}}`), -1},
		{"unterminated", withTemplate(`{"data":{"version":"3`), -1},
	} {
		if got := templateVersion(tc.p); got != tc.want {
			t.Errorf("%s: templateVersion = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestReplicaCountFollowsUpdatesDeletesAndRelists(t *testing.T) {
	r := newReplicaCount(templateVersion)
	replica := func(cluster string, version int) *policyv1.Policy {
		return replication.Build(rootPolicy("p", "run", version), cluster, policyv1.Inform, nil)
	}
	now := time.Now()
	r.see(replica("a", 1), false, now)
	r.see(replica("b", 1), false, now)
	r.see(replica("c", 1), false, now)
	r.see(replica("a", 2), false, now) // updated
	r.see(replica("b", 1), true, now)  // deleted
	if r.count[1] != 1 || r.count[2] != 1 {
		t.Fatalf("counts %v, want one replica at version 1 and one at 2", r.count)
	}
	if _, err := r.waitFor(1, 2, time.Second); err != nil {
		t.Fatalf("one replica carries version 2: %v", err)
	}
	if _, err := r.waitFor(2, 2, time.Millisecond); err == nil {
		t.Fatal("only one replica carries version 2, waitFor(2) must time out")
	}
	r.reset()
	if r.count[1] != 0 || r.count[2] != 0 || len(r.classes) != 0 {
		t.Fatalf("after reset: counts %v, classes %v", r.count, r.classes)
	}
}

func TestPropagatedCountsAReplicaOnceItCarriesItsRolloutStatus(t *testing.T) {
	r := newReplicaCount(propagated)
	replica := func(cluster string, version int, status policyv1.RolloutStatus) *policyv1.Policy {
		p := replication.Build(rootPolicy("p", "run", version), cluster, policyv1.Inform, nil)
		p.Status.RolloutStatus = status
		return p
	}
	t0 := time.Now()
	r.see(replica("a", 1, ""), false, t0)
	r.see(replica("b", 1, ""), false, t0.Add(time.Second))
	r.see(replica("a", 1, policyv1.RolloutProgressing), false, t0.Add(2*time.Second))
	if r.count[1] != 1 || r.count[withoutRolloutStatus(1)] != 1 {
		t.Fatalf("counts %v, want one replica of version 1 with its rollout status and one without", r.count)
	}
	if _, err := r.waitFor(2, 1, time.Millisecond); err == nil {
		t.Fatal("b carries no rollout status: waitFor(2, 1) must time out")
	}
	if got := r.firstSeenOf(1); !got.Equal(t0) {
		t.Errorf("firstSeenOf(1) = %v, want the first replica seen without its rollout status (%v)", got, t0)
	}
	r.see(replica("b", 1, policyv1.RolloutProgressing), false, t0.Add(3*time.Second))
	r.see(replica("a", 2, policyv1.RolloutProgressing), false, t0.Add(4*time.Second)) // an update keeps the status
	if r.count[1] != 1 || r.count[2] != 1 {
		t.Fatalf("counts %v, want one replica at version 1 and one at 2, both with their rollout status", r.count)
	}
	if got := r.firstSeenOf(2); !got.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("firstSeenOf(2) = %v, want %v", got, t0.Add(4*time.Second))
	}
}

func TestWaveTime(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	groups := [][]string{{"a", "b"}, {"c", "d"}, {"e", "f"}, {"g", "h"}}
	byReplica := func(byCluster map[string]time.Time) map[string]time.Time {
		out := map[string]time.Time{}
		for c, t := range byCluster {
			out[replicaKey(c, "bench.r0")] = t
			// Another root's replica on the same cluster, out of order: it
			// must not count for bench.r0.
			out[replicaKey(c, "bench.r1")] = t0
		}
		return out
	}
	s := &instantSpokes{
		enforcedAt: byReplica(map[string]time.Time{
			"a": at(0), "b": at(10), "c": at(1100), "d": at(1300), "e": at(2500), "f": at(2400), "g": at(3700), "h": at(3600),
		}),
		compliantAt: byReplica(map[string]time.Time{
			"a": at(20), "b": at(50), "c": at(1320), "d": at(1310), "e": at(2600), "f": at(2450), "g": at(3800), "h": at(3700),
		}),
	}
	// Waves 1..3 take 1300-50, 2500-1320 and 3700-2600 ms.
	got, err := s.waveTimes(groups, "bench.r0")
	if want := []time.Duration{1250 * time.Millisecond, 1180 * time.Millisecond, 1100 * time.Millisecond}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("waveTimes = %v, %v; want %v", got, err, want)
	}
	s.enforcedAt[replicaKey("e", "bench.r0")] = at(1315) // before d reported
	if _, err := s.waveTimes(groups, "bench.r0"); err == nil || !strings.Contains(err.Error(), "wave 2: 1 cluster(s) enforced before wave 1 had reported Compliant (e.g. e)") {
		t.Fatalf("an out-of-order wave must be an error naming it, got %v", err)
	}
}

// TestCountStatusWrites: only Policy status updates count, accepted (200) and
// refused as conflicts (409), summed over the API server's label sets.
func TestCountStatusWrites(t *testing.T) {
	const metrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="policy.open-cluster-management.io",resource="policies",scope="resource",subresource="status",verb="PUT",version="v1"} 61
apiserver_request_total{code="200",component="apiserver",dry_run="",group="policy.open-cluster-management.io",resource="policies",scope="namespace",subresource="status",verb="PUT",version="v1"} 2
apiserver_request_total{code="409",component="apiserver",dry_run="",group="policy.open-cluster-management.io",resource="policies",scope="resource",subresource="status",verb="PUT",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="policy.open-cluster-management.io",resource="policies",scope="resource",subresource="status",verb="PATCH",version="v1"} 18000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="policy.open-cluster-management.io",resource="policies",scope="resource",subresource="",verb="PUT",version="v1"} 3000
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="status",verb="PUT",version="v1"} 7
# HELP etcd_request_duration_seconds Etcd request latency in seconds.
# TYPE etcd_request_duration_seconds gauge
etcd_request_duration_seconds{operation="update",type="policies"} 0.5
`
	got, err := countStatusWrites([]byte(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if want := (statusWriteCount{accepted: 63, conflicts: 4}); got != want {
		t.Fatalf("countStatusWrites = %+v, want %+v", got, want)
	}
	if _, err := countStatusWrites([]byte("apiserver_request_total{code=\"200\" 1\n")); err == nil {
		t.Fatal("metrics that are not Prometheus text were read")
	}
}

// TestReportPatchMovesTheLastEvaluation: a benchmark report, merged into a
// replica as the API server merges it, carries the compliance and a history
// event that dates the replica's last evaluation to the report, to the
// nanosecond, as a spoke's report does; a report a millisecond later moves it.
func TestReportPatchMovesTheLastEvaluation(t *testing.T) {
	replica := &policyv1.Policy{}
	replica.Namespace, replica.Name = "cluster-1", "bench.root-0"
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	for _, report := range []struct {
		state policyv1.ComplianceState
		at    time.Time
	}{{policyv1.Compliant, at}, {policyv1.NonCompliant, at.Add(time.Millisecond)}} {
		var merged policyv1.Policy
		if err := json.Unmarshal(reportPatch(replica, report.state, report.at), &merged); err != nil {
			t.Fatal(err)
		}
		if merged.Status.ComplianceState != report.state || len(merged.Status.Details) != 1 ||
			merged.Status.Details[0].ComplianceState != report.state || merged.Status.Details[0].TemplateMeta.Name != "bench" {
			t.Fatalf("report %s: status %+v", report.state, merged.Status)
		}
		if got := rollout.EvaluatedAt(1, merged.Status.Details); !got.Equal(report.at) {
			t.Errorf("report %s: last evaluation %v, want %v", report.state, got, report.at)
		}
	}
}
