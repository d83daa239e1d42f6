package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

var t0 = time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)

// root is a root policy with clusters name=state[/rolloutStatus[@seconds after t0]].
func root(ns, name string, state policyv1.ComplianceState, annotations map[string]string, clusters ...string) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}}
	p.Spec.RemediationAction = policyv1.Inform
	p.Status.ComplianceState = state
	for _, c := range clusters {
		name, rest, _ := strings.Cut(c, "=")
		st, rollout, _ := strings.Cut(rest, "/")
		rs, at, _ := strings.Cut(rollout, "@")
		e := &policyv1.CompliancePerClusterStatus{ClusterName: name, ComplianceState: policyv1.ComplianceState(st), RolloutStatus: policyv1.RolloutStatus(rs)}
		if at != "" {
			var s int
			fmt.Sscan(at, &s)
			mt := metav1.NewMicroTime(t0.Add(time.Duration(s) * time.Second))
			e.RolloutLastTransitionTime = &mt
		}
		p.Status.Status = append(p.Status.Status, e)
	}
	return p
}

func set(ns, name string, policies ...string) *policyv1beta1.PolicySet {
	s := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, p := range policies {
		s.Spec.Policies = append(s.Spec.Policies, policyv1.NonEmptyString(p))
	}
	return s
}

func names(rows []PolicyRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Namespace+"/"+r.Name)
	}
	return out
}

func TestFleetOrdersWorstFirstAndCounts(t *testing.T) {
	nist := map[string]string{StandardsAnnotation: "NIST SP 800-53, NIST SP 800-53 ,PCI", CategoriesAnnotation: "CM", ControlsAnnotation: "CM-2"}
	cases := []struct {
		name         string
		roots        []*policyv1.Policy
		sets         []*policyv1beta1.PolicySet
		wantPolicies []string
		wantClusters []string
		wantStandard []GroupCount
		wantSets     []GroupCount
		wantTotal    Counts
	}{{
		name: "states rank NonCompliant, Pending, no status, Compliant; then more non-compliant clusters; then name",
		roots: []*policyv1.Policy{
			root("a", "ok", policyv1.Compliant, nil, "c1=Compliant"),
			root("a", "nostatus", "", nil),
			root("b", "bad-one", policyv1.NonCompliant, nil, "c1=NonCompliant", "c2=Compliant"),
			root("a", "bad-two", policyv1.NonCompliant, nil, "c1=NonCompliant", "c2=NonCompliant"),
			root("a", "pending", policyv1.Pending, nil, "c3=Pending"),
			root("a", "bad-one", policyv1.NonCompliant, nil, "c2=NonCompliant"),
		},
		wantPolicies: []string{"a/bad-two", "a/bad-one", "b/bad-one", "a/pending", "a/nostatus", "a/ok"},
		wantClusters: []string{"c1", "c2", "c3"},
		wantTotal:    Counts{NonCompliant: 3, Pending: 1, Unknown: 1, Compliant: 1},
		wantStandard: []GroupCount{},
		wantSets:     []GroupCount{},
	}, {
		name: "annotation values are split, trimmed and counted once per policy; sets count their policies, empty sets too",
		roots: []*policyv1.Policy{
			root("a", "p1", policyv1.NonCompliant, nist, "c1=NonCompliant"),
			root("a", "p2", policyv1.Compliant, map[string]string{StandardsAnnotation: "PCI"}, "c1=Compliant", "c2=Compliant"),
			root("b", "p1", policyv1.Compliant, nil, "c9="),
		},
		sets:         []*policyv1beta1.PolicySet{set("a", "base", "p1", "p2"), set("a", "empty"), set("b", "other", "p1")},
		wantPolicies: []string{"a/p1", "a/p2", "b/p1"},
		wantClusters: []string{"c1", "c9", "c2"},
		wantTotal:    Counts{NonCompliant: 1, Compliant: 2},
		wantStandard: []GroupCount{{"NIST SP 800-53", Counts{NonCompliant: 1}}, {"PCI", Counts{NonCompliant: 1, Compliant: 1}}},
		wantSets:     []GroupCount{{"a/base", Counts{NonCompliant: 1, Compliant: 1}}, {"a/empty", Counts{}}, {"b/other", Counts{Compliant: 1}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Fleet(tc.roots, tc.sets)
			if got := names(m.Policies); !reflect.DeepEqual(got, tc.wantPolicies) {
				t.Errorf("policies %v, want %v", got, tc.wantPolicies)
			}
			var clusters []string
			for _, c := range m.Clusters {
				clusters = append(clusters, c.Name)
			}
			if !reflect.DeepEqual(clusters, tc.wantClusters) {
				t.Errorf("clusters %v, want %v", clusters, tc.wantClusters)
			}
			if m.Total != tc.wantTotal {
				t.Errorf("total %+v, want %+v", m.Total, tc.wantTotal)
			}
			if !reflect.DeepEqual(m.Standards, tc.wantStandard) {
				t.Errorf("standards %+v, want %+v", m.Standards, tc.wantStandard)
			}
			if !reflect.DeepEqual(m.PolicySets, tc.wantSets) {
				t.Errorf("policy sets %+v, want %+v", m.PolicySets, tc.wantSets)
			}
		})
	}
}

func TestPage(t *testing.T) {
	items := []int{1, 2, 3, 4, 5, 6, 7}
	cases := []struct {
		page, size int
		want       []int
		paging     Paging
	}{
		{1, 3, []int{1, 2, 3}, Paging{Page: 1, Pages: 3, Size: 3, Total: 7, From: 1, To: 3}},
		{3, 3, []int{7}, Paging{Page: 3, Pages: 3, Size: 3, Total: 7, From: 7, To: 7}},
		{9, 3, []int{7}, Paging{Page: 3, Pages: 3, Size: 3, Total: 7, From: 7, To: 7}},                // past the end: the last page
		{0, 0, []int{1}, Paging{Page: 1, Pages: 7, Size: 1, Total: 7, From: 1, To: 1}},                // sizes below 1 are 1
		{1, 1000, []int{1, 2, 3, 4, 5}, Paging{Page: 1, Pages: 2, Size: 5, Total: 7, From: 1, To: 5}}, // capped at maxSize
	}
	for _, tc := range cases {
		got, p := Page(items, tc.page, tc.size, 5)
		if !reflect.DeepEqual(got, tc.want) || p != tc.paging {
			t.Errorf("Page(%d, %d) = %v %+v, want %v %+v", tc.page, tc.size, got, p, tc.want, tc.paging)
		}
	}
	if got, p := Page([]int{}, 2, 10, 10); len(got) != 0 || p.Pages != 1 || p.Total != 0 {
		t.Errorf("an empty list: %v %+v", got, p)
	}
}

func plan(waves ...[]string) *fleetv1alpha1.RolloutPlan {
	p := &fleetv1alpha1.RolloutPlan{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	for i, w := range waves {
		p.Spec.Waves = append(p.Spec.Waves, fleetv1alpha1.Wave{Index: int32(i), Clusters: w,
			DecisionGroups: []fleetv1alpha1.DecisionGroupRef{{Placement: "pl", GroupName: fmt.Sprintf("g%d", i), GroupIndex: int32(i)}}})
	}
	return p
}

func livePlan(waves ...[]string) *rollout.Plan {
	p := &rollout.Plan{Progressive: true}
	for i, w := range waves {
		p.Waves = append(p.Waves, rollout.Wave{Index: i, Clusters: w})
	}
	return p
}

func TestTimeline(t *testing.T) {
	progressive := func(p *policyv1.Policy) *policyv1.Policy {
		p.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive}
		p.Status.RolloutStatus = policyv1.RolloutProgressing
		return p
	}
	cases := []struct {
		name       string
		root       *policyv1.Policy
		plan       *fleetv1alpha1.RolloutPlan
		live       *rollout.Plan
		replicas   map[string]policyv1.RolloutStatus
		divergence string
		start      time.Time
		wantStates []string
		wantHeld   string
		wantDur    []time.Duration
		unplanned  []string
		missing    []string
	}{{
		name: "wave 0 done, wave 1 progressing holds wave 2 back; time to compliant from the start",
		root: progressive(root("ns", "p", policyv1.NonCompliant, nil,
			"a=Compliant/Succeeded@30", "b=Compliant/Succeeded@50", "c=Pending/Progressing@60", "d=NonCompliant/Failed@70", "e=/ToApply@50")),
		plan:       plan([]string{"a", "b"}, []string{"c", "d"}, []string{"e"}),
		start:      t0.Add(10 * time.Second),
		wantStates: []string{WaveDone, WaveFailed, WaveWaiting},
		wantHeld:   "wave 2 waits for wave 1: c (Progressing), d (Failed)",
		wantDur:    []time.Duration{40 * time.Second, 0, 0},
	}, {
		name:       "a done wave before a waiting one: the soak holds it",
		root:       progressive(root("ns", "p", "", nil, "a=Compliant/Succeeded@5", "b=/ToApply@0")),
		plan:       plan([]string{"a"}, []string{"b"}),
		wantStates: []string{WaveDone, WaveWaiting},
		wantHeld:   "wave 1 has not been reached: wave 0 is done; the hub reaches it after the soak (minSuccessTime) at its next step",
		wantDur:    []time.Duration{0, 0}, // no start known
	}, {
		name:       "drift: a live cluster the plan lacks, a planned cluster the live rollout lacks",
		root:       progressive(root("ns", "p", "", nil, "a=Compliant/Succeeded@5", "z=/Progressing@6")),
		plan:       plan([]string{"a", "gone"}),
		wantStates: []string{WaveProgressing},
		unplanned:  []string{"z"},
		missing:    []string{"gone"},
		wantDur:    []time.Duration{0},
	}, {
		name:       "the live plan agrees with the RolloutPlan",
		root:       progressive(root("ns", "p", "", nil, "a=Compliant/Succeeded@5", "b=/ToApply@0")),
		plan:       plan([]string{"a"}, []string{"b"}),
		live:       livePlan([]string{"a"}, []string{"b"}),
		wantStates: []string{WaveDone, WaveWaiting},
		wantHeld:   "wave 1 has not been reached: wave 0 is done; the hub reaches it after the soak (minSuccessTime) at its next step",
		wantDur:    []time.Duration{0, 0},
	}, {
		name:       "the live plan diverges from the RolloutPlan: named as the hub names it",
		root:       progressive(root("ns", "p", "", nil, "a=Compliant/Succeeded@5", "b=/ToApply@0")),
		plan:       plan([]string{"a"}, []string{"b"}),
		live:       livePlan([]string{"b"}, []string{"a"}),
		divergence: "wave 0: planned [a], live [b]",
		wantStates: []string{WaveDone, WaveWaiting},
		wantHeld:   "wave 1 has not been reached: wave 0 is done; the hub reaches it after the soak (minSuccessTime) at its next step",
		wantDur:    []time.Duration{0, 0},
	}, {
		name:       "no RolloutPlan: the live plan's waves; a cluster in no wave is listed apart",
		root:       progressive(root("ns", "p", "", nil, "a=Compliant/Succeeded@5", "b=/Progressing@7", "c=Compliant/")),
		live:       livePlan([]string{"a"}, []string{"b"}),
		start:      t0,
		wantStates: []string{WaveDone, WaveProgressing},
		wantDur:    []time.Duration{5 * time.Second, 0},
		unplanned:  []string{"c"},
	}, {
		name:       "no plan: the live clusters are one wave; the replica's own status is kept",
		root:       progressive(root("ns", "p", "", nil, "b=Compliant/Succeeded@5", "a=Compliant/Succeeded@9")),
		replicas:   map[string]policyv1.RolloutStatus{"a": policyv1.RolloutSucceeded},
		start:      t0,
		wantStates: []string{WaveDone},
		wantDur:    []time.Duration{9 * time.Second},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Timeline(TimelineInput{Root: tc.root, Plan: tc.plan, Live: tc.live, Replicas: tc.replicas, Start: tc.start, Now: t0.Add(time.Minute)})
			if m.Divergence != tc.divergence {
				t.Errorf("divergence %q, want %q", m.Divergence, tc.divergence)
			}
			var states []string
			var durs []time.Duration
			for _, w := range m.Waves {
				states = append(states, w.State)
				durs = append(durs, w.ToCompliant)
			}
			if !reflect.DeepEqual(states, tc.wantStates) {
				t.Errorf("states %v, want %v", states, tc.wantStates)
			}
			if !reflect.DeepEqual(durs, tc.wantDur) {
				t.Errorf("time to compliant %v, want %v", durs, tc.wantDur)
			}
			if m.HeldBy != tc.wantHeld {
				t.Errorf("held by %q, want %q", m.HeldBy, tc.wantHeld)
			}
			if !reflect.DeepEqual(m.Unplanned, tc.unplanned) || !reflect.DeepEqual(m.Missing, tc.missing) {
				t.Errorf("unplanned %v missing %v, want %v %v", m.Unplanned, m.Missing, tc.unplanned, tc.missing)
			}
			for name, want := range tc.replicas {
				for _, w := range m.Waves {
					for _, c := range w.Clusters {
						if c.Name == name && c.ReplicaStatus != want {
							t.Errorf("%s replica status %q, want %q", name, c.ReplicaStatus, want)
						}
					}
				}
			}
			svg := string(TimelineSVG(m))
			if !strings.HasPrefix(svg, "<svg") || strings.Count(svg, "wave") < len(m.Waves) {
				t.Errorf("the chart does not draw every wave: %s", svg)
			}
		})
	}
}

func TestTimelineSVGEscapes(t *testing.T) {
	p := root("ns", `p"><script>x</script>`, "", nil, `<b>=Compliant/Succeeded@1`)
	svg := string(TimelineSVG(Timeline(TimelineInput{Root: p, Now: t0.Add(time.Minute)})))
	if strings.Contains(svg, "<script>") || strings.Contains(svg, "<b>") {
		t.Errorf("the chart carries markup from names: %s", svg)
	}
}

func TestPlacementReasons(t *testing.T) {
	p := root("ns", "p", "", map[string]string{"placement.fleetpolicy.io/clusters": "a,b,x"}, "a=Compliant", "x=Compliant")
	p.Status.Status[1].RemainingBindings = []policyv1.RemainingBinding{{PlacementBinding: "other"}}
	p.Status.Placement = []*policyv1.Placement{{PlacementBinding: "pb", Placement: "pl", PolicySet: "s",
		Exclusions: []policyv1.PolicyExclusion{{ClusterName: "b"}, {ClusterName: "x"}, {ClusterName: "far"}}}}
	p.Status.Conditions = []metav1.Condition{{Type: "ClustersUnknown", Status: "True", Message: "no replica for 1 decided cluster(s) without a ManagedCluster: ghost"}}
	s := set("ns", "s", "p")
	s.Spec.Exclusions = []policyv1beta1.PolicySetExclusion{{PolicyName: "p", Reason: "frozen", ClusterNames: []policyv1.NonEmptyString{"b"}}}
	decided := map[string][]Decided{"pl": {{Cluster: "a", Group: "g[0]"}, {Cluster: "b"}, {Cluster: "c"}, {Cluster: "x"}, {Cluster: "ghost"}}}
	explained := map[string][]string{"ghost": {"ConfigMap fleetpolicy-placement/eu eu.rego: not in the EU"}}
	all, excluded := Placement(p, []*policyv1beta1.PolicySet{s}, decided, "placement.fleetpolicy.io/clusters", explained)
	want := map[string]string{
		"a":     "",
		"b":     "PolicySet s excludes it (frozen)",
		"c":     "the placement policies do not allow it (placement.fleetpolicy.io/clusters lists 3 cluster(s))",
		"x":     "PolicySet s excludes it; still placed by other",
		"ghost": "the placement policies do not allow it: ConfigMap fleetpolicy-placement/eu eu.rego: not in the EU",
	}
	if len(all) != len(want) {
		t.Fatalf("decisions %+v", all)
	}
	for _, d := range all {
		if d.Reason != want[d.Cluster] {
			t.Errorf("%s: %q, want %q", d.Cluster, d.Reason, want[d.Cluster])
		}
		if d.Bound != (d.Cluster == "a" || d.Cluster == "x") {
			t.Errorf("%s bound %v", d.Cluster, d.Bound)
		}
	}
	var ex []string
	for _, d := range excluded {
		ex = append(ex, d.Cluster)
	}
	if !reflect.DeepEqual(ex, []string{"far", "b", "c", "ghost"}) {
		t.Errorf("excluded %v", ex)
	}
	// Without the annotation, an unknown cluster is named as such and one no binding places as that.
	delete(p.Annotations, "placement.fleetpolicy.io/clusters")
	all, _ = Placement(p, nil, decided, "placement.fleetpolicy.io/clusters", nil)
	for _, d := range all {
		switch d.Cluster {
		case "ghost":
			if !strings.Contains(d.Reason, "no ManagedCluster") {
				t.Errorf("ghost: %q", d.Reason)
			}
		case "c":
			if !strings.Contains(d.Reason, "no binding") {
				t.Errorf("c: %q", d.Reason)
			}
		}
	}
}

func TestTableExport(t *testing.T) {
	tb := Table{Columns: []string{"name", "note"}, Rows: [][]string{{"a", "=HYPERLINK(\"x\")"}, {"b,c", "-1"}, {"d", "plain"}}}
	var csvOut bytes.Buffer
	if err := tb.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	want := "name,note\na,\"'=HYPERLINK(\"\"x\"\")\"\n\"b,c\",'-1\nd,plain\n"
	if csvOut.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", csvOut.String(), want)
	}
	var jsonOut bytes.Buffer
	if err := tb.WriteJSON(&jsonOut); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	if err := json.Unmarshal(jsonOut.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0]["note"] != `=HYPERLINK("x")` || rows[1]["name"] != "b,c" {
		t.Errorf("JSON rows %v", rows)
	}
}

func TestMatrix(t *testing.T) {
	roots := []*policyv1.Policy{
		root("a", "p1", policyv1.NonCompliant, nil, "c1=NonCompliant", "c2=Compliant", "c3=Pending"),
		root("a", "p2", policyv1.Compliant, nil, "c2=Compliant"),
	}
	m := Fleet(roots, nil)
	got := Matrix(roots, m.Policies, []string{"c3", "c2", "absent"})
	want := [][]MatrixCell{
		{{true, policyv1.Pending}, {true, policyv1.Compliant}, {}},
		{{}, {true, policyv1.Compliant}, {}},
	}
	if len(got.Rows) != 2 || got.Rows[0].Name != "p1" || got.Rows[1].Name != "p2" {
		t.Fatalf("rows %+v", got.Rows)
	}
	for i, r := range got.Rows {
		if !reflect.DeepEqual(r.Cells, want[i]) {
			t.Errorf("%s: %+v, want %+v", r.Name, r.Cells, want[i])
		}
	}
}

func TestPendingWhy(t *testing.T) {
	r := &policyv1.Policy{}
	r.Status.Details = []*policyv1.DetailsPerTemplate{
		{TemplateMeta: metav1.ObjectMeta{Name: "ok"}, ComplianceState: policyv1.Compliant, History: []policyv1.ComplianceHistory{{Message: "Compliant; fine"}}},
		{TemplateMeta: metav1.ObjectMeta{Name: "gated"}, ComplianceState: policyv1.Pending,
			History: []policyv1.ComplianceHistory{{Message: "Dependencies were not satisfied: Policy ns/base is NonCompliant"}, {Message: "older"}}},
		{TemplateMeta: metav1.ObjectMeta{Name: "silent"}, ComplianceState: policyv1.Pending},
		nil,
	}
	want := "gated: Dependencies were not satisfied: Policy ns/base is NonCompliant; silent: Pending"
	if got := PendingWhy(r); got != want {
		t.Errorf("PendingWhy = %q, want %q", got, want)
	}
}
