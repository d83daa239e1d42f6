package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden")

func TestBenchmarkName(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"BenchmarkResolve-2 1 5 ns/op", "Resolve"},
		{"BenchmarkResolve 1 5 ns/op", "Resolve"},
		{"BenchmarkHub/policies=1/clusters=3000-16 1 5 ns/op", "Hub/policies=1/clusters=3000"},
		{"BenchmarkHub/policies=1/clusters=3000/create 1 5 ns/op", "Hub/policies=1/clusters=3000/create"},
		{"BenchmarkFunctions/plan-rollout/1000/alone-2 1 5 ns/op", "Functions/plan-rollout/1000/alone"},
	} {
		r := benchfmt.NewReader(strings.NewReader(tc.line), "test")
		if !r.Scan() {
			t.Fatalf("%q: no result", tc.line)
		}
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			t.Fatalf("%q: %v", tc.line, r.Result())
		}
		if got := benchmarkName(res.Name); got != tc.want {
			t.Errorf("%q: name %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		want   float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{10, 1, 2}, 2}, // not the mean
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.values); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.values, got, tc.want)
		}
	}
}

// rowText is a row in a form tests can compare: unit, median and n of the
// figure, floor and ratio, and the target cell.
func rowText(r row) string {
	s := func(x summary) string {
		if x.n == 0 {
			return "-"
		}
		return x.unit + "=" + formatNumber(x.median) + "/" + formatNumber(float64(x.n))
	}
	return r.benchmark + " " + s(r.figure) + " floor:" + s(r.floor) + " ratio:" + s(r.ratio) + " target:" + r.verdict()
}

func tableOf(t *testing.T, input string, allocs bool) []string {
	t.Helper()
	rs := newResults()
	if err := rs.read(strings.NewReader(input), "test"); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs.table(allocs) {
		out = append(out, rowText(r))
	}
	return out
}

func TestRows(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		allocs      bool
		want        []string
	}{{
		name: "a micro-benchmark: ns/op and its other figures, medians over its runs; no B/op and allocs/op",
		input: "BenchmarkResolve-2 10 300 ns/op 5 B/op 1 allocs/op 4 items/op\n" +
			"BenchmarkResolve-2 10 100 ns/op 5 B/op 1 allocs/op 4 items/op\n" +
			"BenchmarkResolve-2 10 200 ns/op 7 B/op 1 allocs/op 6 items/op\n",
		want: []string{
			"Resolve ns/op=200/3 floor:- ratio:- target:",
			"Resolve items/op=4/3 floor:- ratio:- target:",
		},
	}, {
		name:   "B/op and allocs/op with -allocs",
		input:  "BenchmarkResolve-2 10 300 ns/op 5 B/op 1 allocs/op\n",
		allocs: true,
		want: []string{
			"Resolve ns/op=300/1 floor:- ratio:- target:",
			"Resolve B/op=5/1 floor:- ratio:- target:",
			"Resolve allocs/op=1/1 floor:- ratio:- target:",
		},
	}, {
		name: "floor-<unit> and x- pair with the figure; ns/op is dropped when there is a floor",
		input: "BenchmarkX/a=1 1 9000 ns/op 9 s 3 floor-s 3 x-floor\n" +
			"BenchmarkX/a=1 1 9000 ns/op 8 s 4 floor-s 2 x-floor\n",
		want: []string{"X/a=1 s=8.5/2 floor:floor-s=3.5/2 ratio:x-floor=2.5/2 target:"},
	}, {
		name: "the older spellings of the floor: identity-s/run and s/floor",
		input: "BenchmarkFunctions/f/1000/alone-2 1 5 ns/op 0.2 identity-s/run 0.4 s/run 2 x-identity\n" +
			"BenchmarkTemplateSync500-2 1 5 ns/op 7 s/floor 21 s/sync 3 x-floor\n",
		want: []string{
			"Functions/f/1000/alone s/run=0.4/1 floor:identity-s/run=0.2/1 ratio:x-identity=2/1 target:≤ 1.5× MISS",
			"TemplateSync500 s/sync=21/1 floor:s/floor=7/1 ratio:x-floor=3/1 target:",
		},
	}, {
		name:  "the figure with a floor leads, whatever order go test printed the units in",
		input: "BenchmarkSync/p=500-2 1 44 ns/op 84 MiB-peak-rss 10 floor-s 44 s 4.4 x-floor\n",
		want: []string{
			"Sync/p=500 s=44/1 floor:floor-s=10/1 ratio:x-floor=4.4/1 target:",
			"Sync/p=500 MiB-peak-rss=84/1 floor:- ratio:- target:",
		},
	}, {
		name:  "ns/op that is 0 in every run is dropped next to other figures",
		input: "BenchmarkM/p=1 1 0 ns/op 91 MiB-peak-rss 0.4 cpu-s/k\nBenchmarkM/p=1 1 0 ns/op 93 MiB-peak-rss 0.6 cpu-s/k\n",
		want: []string{
			"M/p=1 MiB-peak-rss=92/2 floor:- ratio:- target:",
			"M/p=1 cpu-s/k=0.5/2 floor:- ratio:- target:",
		},
	}, {
		name:  "ns/op stays when it is the figure with the floor",
		input: "BenchmarkN 1 300 ns/op 100 floor-ns/op 3 x-floor 2 cpu-s/op\n",
		want: []string{
			"N ns/op=300/1 floor:floor-ns/op=100/1 ratio:x-floor=3/1 target:",
			"N cpu-s/op=2/1 floor:- ratio:- target:",
		},
	}, {
		name:  "ns/op is dropped next to the benchmark's own time",
		input: "BenchmarkR/total 1 14100000000 ns/op 14.1 s\nBenchmarkR/wave 1 5 ns/op 2 s/wave\nBenchmarkR/lat 1 5 ns/op 3 ms\n",
		want: []string{
			"R/total s=14.1/1 floor:- ratio:- target:",
			"R/wave s/wave=2/1 floor:- ratio:- target:",
			"R/lat ms=3/1 floor:- ratio:- target:",
		},
	}, {
		name:  "without a floor, the ratio belongs to the first figure",
		input: "BenchmarkP/plan-2 1 2000 ns/op 3 cpu-s/op 1.5 x-identity\n",
		want: []string{
			"P/plan ns/op=2000/1 floor:- ratio:x-identity=1.5/1 target:",
			"P/plan cpu-s/op=3/1 floor:- ratio:- target:",
		},
	}, {
		name:  "a floor without its figure and a second ratio get rows of their own",
		input: "BenchmarkQ 1 0 ns/op 4 s 2 floor-s 2 x-floor 3 floor-MiB 9 x-other\n",
		want: []string{
			"Q s=4/1 floor:floor-s=2/1 ratio:x-floor=2/1 target:",
			"Q floor-MiB=3/1 floor:- ratio:- target:",
			"Q x-other=9/1 floor:- ratio:- target:",
		},
	}, {
		name: "the krm kit against the SDK identity: wall time leads with its floor and ratio; the peak-RSS ratio has its target",
		input: "BenchmarkKitAgainstSDK/identity/10000-2 1 9 ns/op 329 MiB-peak-rss 2.5 cpu-s/run 1.2 floor-s/run 0.6 s/run " +
			"1060 sdk-identity-MiB-peak-rss 3.3 sdk-identity-cpu-s/run 0.5 x-sdk-identity 0.76 x-sdk-identity-cpu 0.31 x-sdk-identity-peak-rss\n",
		want: []string{
			"KitAgainstSDK/identity/10000 s/run=0.6/1 floor:floor-s/run=1.2/1 ratio:x-sdk-identity=0.5/1 target:≤ 1× pass",
			"KitAgainstSDK/identity/10000 MiB-peak-rss=329/1 floor:- ratio:- target:",
			"KitAgainstSDK/identity/10000 cpu-s/run=2.5/1 floor:- ratio:- target:",
			"KitAgainstSDK/identity/10000 sdk-identity-MiB-peak-rss=1060/1 floor:- ratio:- target:",
			"KitAgainstSDK/identity/10000 sdk-identity-cpu-s/run=3.3/1 floor:- ratio:- target:",
			"KitAgainstSDK/identity/10000 x-sdk-identity-cpu=0.76/1 floor:- ratio:- target:",
			"KitAgainstSDK/identity/10000 x-sdk-identity-peak-rss=0.31/1 floor:- ratio:- target:≤ 1 pass",
		},
	}, {
		name:  "go test's lines (with -N) and fleetpolicy-bench's (without) are one benchmark",
		input: "BenchmarkS-2 1 0 ns/op 10 s\nBenchmarkS 1 0 ns/op 30 s\nBenchmarkS-4 1 0 ns/op 20 s\n",
		want:  []string{"S s=20/3 floor:- ratio:- target:"},
	}, {
		name: "non-result lines are ignored",
		input: "goos: linux\n--- FAIL: BenchmarkS\n    bench_test.go:1: BenchmarkS 1 2 s\nBenchmarkS\nPASS\nok  \tpkg\t1s\n" +
			"BenchmarkS 1 0 ns/op 10 s\n",
		want: []string{"S s=10/1 floor:- ratio:- target:"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := tableOf(t, tc.input, tc.allocs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestTargets(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		// Functions: ≤ 1.5× the identity, on the ratio's median.
		{"BenchmarkFunctions/plan-rollout/10000/alone-2 1 0 ns/op 0.5 identity-s/run 0.75 s/run 1.5 x-identity", "≤ 1.5× pass"},
		{"BenchmarkFunctions/plan-rollout/10000/alone-2 1 0 ns/op 0.5 identity-s/run 0.76 s/run 1.52 x-identity", "≤ 1.5× MISS"},
		{"BenchmarkFunctions/plan-rollout/10000/alone-2 1 0 ns/op 0.5 identity-s/run 0.76 s/run", "≤ 1.5× not reported"},
		// Hub propagation: ≤ 1.3× the floor for create and update only.
		{"BenchmarkHubPropagation/policies=100/clusters=1000/create 1 1 ns/op 2 s 1 floor-s 2 x-floor", "≤ 1.3× MISS"},
		{"BenchmarkHubPropagation/policies=1/clusters=1000/update 1 1 ns/op 1 s 1 floor-s 1 x-floor", "≤ 1.3× pass"},
		{"BenchmarkHubRollout/clusters=1000/wave 1 1 ns/op 2 s/wave 1 floor-s/wave 2 x-floor", ""},
		// ... and ≤ 1.3× the pure-write floor.
		{"BenchmarkHubPropagation/policies=1/clusters=1000/create/pure-write 1 1 ns/op 1.6 s 1 floor-s 1.6 x-floor", "≤ 1.3× MISS"},
		{"BenchmarkHubPropagation/policies=1/clusters=1000/update/pure-write 1 1 ns/op 1.2 s 1 floor-s 1.2 x-floor", "≤ 1.3× pass"},
		// Hub propagation, the first replica: ≤ 0.2 s whatever the floor.
		{"BenchmarkHubPropagation/policies=1/clusters=1000/first-replica 1 1 ns/op 0.03 s 0.01 floor-s 3 x-floor", "≤ 0.2 pass"},
		{"BenchmarkHubPropagation/policies=1/clusters=1000/first-replica 1 1 ns/op 1.2 s 0.01 floor-s 120 x-floor", "≤ 0.2 MISS"},
		{"BenchmarkHubPropagation/policies=1/clusters=1000/startup 1 1 ns/op 2 s", ""},
		// Compliance churn: p99 lag ≤ 2 s, CPU ≤ 1.3× the floor's.
		{"BenchmarkHubComplianceChurn/clusters=3000/changes-per-s=300/lag-p99 1 1 ns/op 1.5 s 0.9 floor-s 1.6 x-floor", "≤ 2 pass"},
		{"BenchmarkHubComplianceChurn/clusters=3000/changes-per-s=300/lag-p50 1 1 ns/op 2.5 s 0.9 floor-s 2.7 x-floor", ""},
		{"BenchmarkHubComplianceChurn/clusters=3000/changes-per-s=300/cpu 1 0 ns/op 1.2 cpu-s/1000-changes 0.5 floor-cpu-s/1000-changes 2.4 x-floor", "≤ 1.3× MISS"},
		// Hub CPU and memory.
		{"BenchmarkHubPropagation/policies=1/clusters=1000/cpu 1 0 ns/op 0.76 cpu-s/1000-replicas", "≤ 0.5 MISS"},
		{"BenchmarkHubMemory/policies=10/clusters=3000/cpu 1 0 ns/op 0.45 cpu-s/1000-replicas", "≤ 0.5 pass"},
		{"BenchmarkHubPropagation/policies=1/clusters=3000/rss 1 0 ns/op 80 MiB-peak-rss", "≤ 80 pass"},
		{"BenchmarkHubPropagation/policies=1/clusters=3000/rss 1 0 ns/op 81 MiB-peak-rss", "≤ 80 MISS"},
		{"BenchmarkHubMemory/policies=10/clusters=3000 1 0 ns/op 143 MiB-peak-rss", "≤ 200 pass"},
		{"BenchmarkHubPropagation/policies=1/clusters=1000/rss 1 0 ns/op 68 MiB-peak-rss", ""},
		{"BenchmarkHubMemory/policies=100/clusters=3000 1 0 ns/op 300 MiB-peak-rss", ""},
		// Hub memory against a cache of the same replicas: ≤ 1.15×.
		{"BenchmarkHubMemory/policies=100/clusters=3000/x-cache 1 0 ns/op 1500 MiB-peak-rss 1400 floor-MiB-peak-rss 1.07 x-floor", "≤ 1.15× pass"},
		{"BenchmarkHubMemory/policies=10/clusters=3000/x-cache 1 0 ns/op 246 MiB-peak-rss 189 floor-MiB-peak-rss 1.3 x-floor", "≤ 1.15× MISS"},
		// plan-rollout at maxConcurrency 1: under 2 s, in process and through the binary.
		{"BenchmarkPlanRolloutBinary/scheduled-clusters/one-at-a-time-2 1 3512606167 ns/op 2.1 cpu-s/run 0.4 floor-s/run 1.5 s/run 3.75 x-identity", "≤ 2 pass"},
		{"BenchmarkPlanRollout/exported-decisions/one-at-a-time-2 1 2500000000 ns/op 0.35 floor-s/run 2.1 s/run 6 x-identity", "≤ 2 MISS"},
		{"BenchmarkPlanRolloutBinary/scheduled-clusters/per-group-2 1 3512606167 ns/op 0.4 floor-s/run 2.1 s/run 5.25 x-identity", ""},
		// The krm kit: no slower than the kpt SDK's identity (issue 17).
		{"BenchmarkKitAgainstSDK/validate-dependencies/10000-2 1 0 ns/op 1 floor-s/run 0.65 s/run 0.65 x-sdk-identity", "≤ 1× pass"},
		{"BenchmarkKitAgainstSDK/identity/10000-2 1 0 ns/op 1 floor-s/run 1.1 s/run 1.1 x-sdk-identity", "≤ 1× MISS"},
		// The spoke's template sync: under 2× its floor under the spoke's
		// default limits; none without limits.
		{"BenchmarkSpokeTemplateSync/policies=500/limits=default-2 1 1 ns/op 61 MiB-peak-rss 12 floor-s 25 s 2.1 x-floor", "≤ 2× MISS"},
		{"BenchmarkSpokeTemplateSync/policies=500/limits=default-2 1 1 ns/op 61 MiB-peak-rss 24 floor-s 33 s 1.4 x-floor", "≤ 2× pass"},
		{"BenchmarkSpokeTemplateSync/policies=500/limits=none-2 1 1 ns/op 61 MiB-peak-rss 7 floor-s 20 s 2.9 x-floor", ""},
		{"BenchmarkSpokeTemplateSync/policies=500/floor=unthrottled-2 1 1 ns/op 61 MiB-peak-rss 7 floor-s 20 s 2.9 x-floor", ""},
	} {
		rows := tableOf(t, tc.line, false)
		_, got, _ := strings.Cut(rows[0], " target:")
		if got != tc.want {
			t.Errorf("%s\n  target %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestBadLinesNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "results.txt")
	if err := os.WriteFile(file, []byte("BenchmarkOK 1 5 s\nBenchmarkBad 1 five s\nBenchmarkNoUnit 1 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{file}, nil, &out, &errOut, options{}); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out.String(), "OK") {
		t.Errorf("the good line is missing from the table:\n%s", out.String())
	}
	for _, want := range []string{file + ":2: parsing measurement", file + ":3: missing units"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	errOut.Reset()
	if code := run([]string{filepath.Join(dir, "missing.txt")}, nil, &out, &errOut, options{}); code != 1 || !strings.Contains(errOut.String(), "missing.txt") {
		t.Errorf("a missing file: exit %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run(nil, strings.NewReader("PASS\n"), &out, &errOut, options{}); code != 1 || !strings.Contains(errOut.String(), "no benchmark result lines") {
		t.Errorf("no results: exit %d, stderr %q", code, errOut.String())
	}
}

// TestGolden prints the table of testdata/results.txt (several runs of each
// kind of benchmark `make bench` runs) as text and as Markdown.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		o      options
	}{
		{"testdata/results.golden", options{}},
		{"testdata/results.md.golden", options{markdown: true}},
		{"testdata/results-allocs.golden", options{allocs: true}},
	} {
		var out, errOut bytes.Buffer
		if code := run([]string{"testdata/results.txt"}, nil, &out, &errOut, tc.o); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if *update {
			if err := os.WriteFile(tc.golden, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(tc.golden)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != string(want) {
			t.Errorf("%s differs (go test -update rewrites it):\n%s", tc.golden, out.String())
		}
	}
}

// FuzzRead: any input gives a table or errors, never a panic.
func FuzzRead(f *testing.F) {
	seed, err := os.ReadFile("testdata/results.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("BenchmarkX 1 0 ns/op 1 floor- 2 x- 3 floor-x-\nBenchmarkX-2 1 NaN s -Inf floor-s\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		for _, o := range []options{{}, {markdown: true, allocs: true}} {
			var out, errOut bytes.Buffer
			run(nil, bytes.NewReader(input), &out, &errOut, o)
		}
	})
}
