package placement

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func regoPolicy(name, module string) corev1.ConfigMap {
	return policyConfigMap(name, Rego, map[string]string{"policy.rego": "package fleetpolicy.placement\n\n" + module})
}

func celPolicy(name, doc string) corev1.ConfigMap {
	return policyConfigMap(name, CEL, map[string]string{"policy.yaml": doc})
}

func id(configMap string, language Language) PolicyID {
	if language == Rego {
		return PolicyID{ConfigMap: configMap, Key: "policy.rego"}
	}
	return PolicyID{ConfigMap: configMap, Key: "policy.yaml"}
}

// fleet is a small inventory: two EU clusters (gold, silver) and a US one.
var fleet = []Cluster{
	{Name: "eu-1", Labels: map[string]string{"region": "eu", "tier": "gold"}, Claims: map[string]string{}},
	{Name: "eu-2", Labels: map[string]string{"region": "eu", "tier": "silver"}, Claims: map[string]string{}},
	{Name: "us-1", Labels: map[string]string{"region": "us", "tier": "gold"}, Claims: map[string]string{}},
}

const (
	euOnlyCEL = "match:\n- expression: cluster.labels.region == 'eu'\n  message: outside the EU\n"
	goldRego  = `annotations[k] := concat(",", sort([n | some n, c in data.clusters; c.labels.tier == "gold"])) if k := "placement.fleetpolicy.io/clusters"
excluded[n] := "not gold" if { some n, c in data.clusters; c.labels.tier != "gold" }
`
)

func TestMergeAndExplain(t *testing.T) {
	type decision struct {
		allowed bool
		reasons []string // Reason.String()
	}
	noPolicy := decision{true, []string{"no placement policy restricts where the resource goes"}}
	cases := []struct {
		name        string
		policies    []corev1.ConfigMap
		annotations map[string]string // the resource's
		want        map[string]string
		wantErrors  []string // Message.String()
		decisions   map[string]decision
	}{
		{name: "no policy", want: nil,
			decisions: map[string]decision{"eu-1": noPolicy, "eu-2": noPolicy, "us-1": noPolicy}},
		{name: "two policies restrict: the clusters both select",
			policies: []corev1.ConfigMap{celPolicy("eu", euOnlyCEL), regoPolicy("gold", goldRego)},
			want:     map[string]string{ClustersAnnotation: "eu-1"},
			decisions: map[string]decision{
				"eu-1": {true, []string{"fleetpolicy-placement/eu[policy.yaml]: selects the cluster", "fleetpolicy-placement/gold[policy.rego]: selects the cluster"}},
				"eu-2": {false, []string{"fleetpolicy-placement/eu[policy.yaml]: selects the cluster", "fleetpolicy-placement/gold[policy.rego]: not gold"}},
				"us-1": {false, []string{"fleetpolicy-placement/eu[policy.yaml]: outside the EU", "fleetpolicy-placement/gold[policy.rego]: selects the cluster"}},
			}},
		{name: "the policy's value wins over the resource's",
			policies:    []corev1.ConfigMap{regoPolicy("owner", `annotations["owner"] := "platform"`)},
			annotations: map[string]string{"owner": "dev", "team": "a"},
			want:        map[string]string{"owner": "platform"},
			decisions:   map[string]decision{"eu-1": noPolicy, "eu-2": noPolicy, "us-1": noPolicy}},
		{name: "a value the resource already has changes nothing",
			policies:    []corev1.ConfigMap{regoPolicy("owner", `annotations["owner"] := "platform"`)},
			annotations: map[string]string{"owner": "platform"},
			want:        map[string]string{"owner": "platform"}},
		{name: "two policies agreeing on a value",
			policies: []corev1.ConfigMap{regoPolicy("a", `annotations["owner"] := "platform"`),
				celPolicy("b", "annotations:\n  owner: '\"platform\"'\n")},
			want: map[string]string{"owner": "platform"}},
		{name: "two policies disagreeing on a value: denied",
			policies: []corev1.ConfigMap{regoPolicy("a", `annotations["owner"] := "platform"`),
				celPolicy("b", "annotations:\n  owner: '\"security\"'\n")},
			want:       map[string]string{"owner": "platform"},
			wantErrors: []string{`fleetpolicy-placement/b[policy.yaml]: sets annotation owner to "security", but fleetpolicy-placement/a[policy.rego] sets it to "platform"`},
			decisions: map[string]decision{"eu-1": {false, []string{noPolicy.reasons[0],
				`fleetpolicy-placement/b[policy.yaml]: denies the resource: sets annotation owner to "security", but fleetpolicy-placement/a[policy.rego] sets it to "platform"`}}}},
		{name: "without a restricting policy the resource's own clusters annotation decides",
			policies:    []corev1.ConfigMap{regoPolicy("owner", `annotations["owner"] := "platform"`)},
			annotations: map[string]string{ClustersAnnotation: "us-1, eu-2"},
			want:        map[string]string{"owner": "platform"},
			decisions: map[string]decision{
				"eu-1": {false, []string{"the resource's own placement.fleetpolicy.io/clusters annotation does not list the cluster"}},
				"eu-2": {true, []string{"the resource's own placement.fleetpolicy.io/clusters annotation lists the cluster"}},
			}},
		{name: "a restricting policy replaces the resource's own clusters annotation",
			policies:    []corev1.ConfigMap{celPolicy("eu", euOnlyCEL)},
			annotations: map[string]string{ClustersAnnotation: "us-1"},
			want:        map[string]string{ClustersAnnotation: "eu-1,eu-2"},
			decisions:   map[string]decision{"us-1": {false, []string{"fleetpolicy-placement/eu[policy.yaml]: outside the EU"}}}},
		{name: "Rego values that are not strings are written as JSON, the clusters value normalised",
			policies: []corev1.ConfigMap{regoPolicy("json", `annotations["prefs"] := {"rebalance": true, "weight": 1}
annotations["placement.fleetpolicy.io/clusters"] := " us-1, eu-1,eu-1,"`)},
			want:      map[string]string{"prefs": `{"rebalance":true,"weight":1}`, ClustersAnnotation: "eu-1,us-1"},
			decisions: map[string]decision{"eu-2": {false, []string{"fleetpolicy-placement/json[policy.rego]: does not select the cluster"}}}},
		{name: "CEL errors and annotations read the selected clusters; default messages quote the expression",
			policies: []corev1.ConfigMap{celPolicy("count", `match:
- expression: cluster.labels.tier == 'gold'
annotations:
  selected: 'selected.join(",") + " of " + string(size(selected))'
errors:
- expression: size(selected) < 3
`)},
			want:       map[string]string{ClustersAnnotation: "eu-1,us-1", "selected": "eu-1,us-1 of 2"},
			wantErrors: []string{"fleetpolicy-placement/count[policy.yaml]: fails errors[0].expression: size(selected) < 3"},
			decisions: map[string]decision{"eu-2": {false, []string{
				"fleetpolicy-placement/count[policy.yaml]: fails match[0].expression: cluster.labels.tier == 'gold'",
				"fleetpolicy-placement/count[policy.yaml]: denies the resource: fails errors[0].expression: size(selected) < 3"}}}},
		{name: "CEL without match: selected is every cluster, and no clusters annotation",
			policies:  []corev1.ConfigMap{celPolicy("all", "annotations:\n  seen: 'string(size(selected))'\n")},
			want:      map[string]string{"seen": "3"},
			decisions: map[string]decision{"eu-1": noPolicy}},
		{name: "CEL when false: the policy says nothing",
			policies: []corev1.ConfigMap{celPolicy("never", "when: 'false'\n"+euOnlyCEL+"errors:\n- expression: 'true'\n")},
			want:     nil, decisions: map[string]decision{"us-1": noPolicy}},
		{name: "Rego excluded may give a set of reasons",
			policies: []corev1.ConfigMap{regoPolicy("why", `annotations["placement.fleetpolicy.io/clusters"] := "eu-1"
excluded[n] contains "b reason" if some n, _ in data.clusters
excluded[n] contains "a reason" if some n, _ in data.clusters`)},
			want:      map[string]string{ClustersAnnotation: "eu-1"},
			decisions: map[string]decision{"us-1": {false, []string{"fleetpolicy-placement/why[policy.rego]: a reason", "fleetpolicy-placement/why[policy.rego]: b reason"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := loaded(t, fleet, tc.policies...)
			got, err := e.Explain(context.Background(), resource(tc.annotations))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Annotations, tc.want) {
				t.Errorf("annotations %v, want %v", got.Annotations, tc.want)
			}
			var gotErrors []string
			for _, m := range got.Errors {
				gotErrors = append(gotErrors, m.String())
			}
			if !reflect.DeepEqual(gotErrors, tc.wantErrors) {
				t.Errorf("errors %q, want %q", gotErrors, tc.wantErrors)
			}
			if len(got.Clusters) != len(fleet) {
				t.Fatalf("%d decisions, want %d", len(got.Clusters), len(fleet))
			}
			for _, d := range got.Clusters {
				want, ok := tc.decisions[d.Cluster]
				if !ok {
					continue
				}
				var reasons []string
				for _, r := range d.Reasons {
					reasons = append(reasons, r.String())
				}
				if d.Allowed != want.allowed || !reflect.DeepEqual(reasons, want.reasons) {
					t.Errorf("cluster %s: %v %q, want %v %q", d.Cluster, d.Allowed, reasons, want.allowed, want.reasons)
				}
			}
		})
	}
}

func TestEvaluationErrors(t *testing.T) {
	items := make([]any, 200)
	for i := range items {
		items[i] = i
	}
	big := resource(nil)
	big["spec"] = map[string]any{"items": items}
	labelled := []Cluster{{Name: "c1", Labels: map[string]string{"level": "high"}}}
	cases := []struct {
		name      string
		policy    corev1.ConfigMap
		resource  map[string]any
		wantField string
		wantErr   string
	}{
		{name: "Rego: two values for one annotation", policy: regoPolicy("conflict", `annotations["a"] := "x"
annotations["a"] := "y" if true`), wantErr: "eval_conflict_error"},
		{name: "Rego: annotations is not an object", policy: regoPolicy("shape", `annotations := "x"`),
			wantField: "annotations", wantErr: "is a string, want an object of annotation to value"},
		{name: "Rego: errors is not a set", policy: regoPolicy("shape", `errors := {"a": "b"}`),
			wantField: "errors", wantErr: "is an object, want a set of messages"},
		{name: "Rego: an annotation name that is not one", policy: regoPolicy("key", `annotations["not a key!"] := "x"`),
			wantField: `annotations["not a key!"]`, wantErr: "not an annotation name"},
		{name: "CEL: a conversion that fails for one cluster",
			policy:    celPolicy("int", "match:\n- expression: int(cluster.labels.level) > 1\n"),
			wantField: "match[0].expression for cluster c1", wantErr: "type conversion error"},
		{name: "CEL: a dyn expression that is not a bool",
			policy:    celPolicy("dyn", "match:\n- expression: cluster.labels.level\n"),
			wantField: "match[0].expression for cluster c1", wantErr: "the expression gave string, want a bool"},
		{name: "CEL: a variable that fails", policy: celPolicy("var", "variables:\n- name: x\n  expression: object.spec.missing\nerrors:\n- expression: variables.x == 1\n"),
			wantField: "variables[0].expression", wantErr: "no such key: spec"},
		{name: "CEL: the cost limit", resource: big,
			policy:    celPolicy("cost", "errors:\n- expression: object.spec.items.all(x, object.spec.items.all(y, object.spec.items.all(z, true)))\n"),
			wantField: "errors[0].expression", wantErr: "cost limit exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := loaded(t, labelled, tc.policy)
			obj := tc.resource
			if obj == nil {
				obj = resource(nil)
			}
			_, err := e.Evaluate(context.Background(), obj)
			var policyErr *PolicyError
			if !errors.As(err, &policyErr) {
				t.Fatalf("error %v, want a *PolicyError", err)
			}
			if policyErr.Policy.ConfigMap != tc.policy.Name || policyErr.Field != tc.wantField || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q (policy %v, field %q), want policy %s, field %q and %q", err, policyErr.Policy, policyErr.Field, tc.policy.Name, tc.wantField, tc.wantErr)
			}
		})
	}
}

func TestCancelledEvaluation(t *testing.T) {
	for _, policy := range []corev1.ConfigMap{exampleConfigMap(t, "policy-rego.yaml"), exampleConfigMap(t, "policy-cel.yaml")} {
		t.Run(policy.Name, func(t *testing.T) {
			e := loaded(t, exampleClusters(t), policy)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := e.Evaluate(ctx, exampleResources(t)["Policy/payments"]); !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
		})
	}
}

func TestLoadStatus(t *testing.T) {
	inOtherNamespace := regoPolicy("elsewhere", `errors contains "x"`)
	inOtherNamespace.Namespace = "default"
	unlabelled := regoPolicy("plain", `errors contains "x"`)
	unlabelled.Labels = nil
	binary := celPolicy("binary", euOnlyCEL)
	binary.BinaryData = map[string][]byte{"compiled.bin": {0}}
	type status struct{ configMap, annotation string }
	cases := []struct {
		name         string
		configMaps   []corev1.ConfigMap
		want         []status
		hasPolicies  bool
		evaluateFail string // "" when evaluation succeeds
	}{
		{name: "no ConfigMap", want: []status{}},
		{name: "ConfigMaps that are no placement policy are ignored",
			configMaps: []corev1.ConfigMap{inOtherNamespace, unlabelled}, want: []status{}},
		{name: "policies that compile, sorted by name",
			configMaps:  []corev1.ConfigMap{regoPolicy("b", goldRego), celPolicy("a", euOnlyCEL)},
			want:        []status{{"a", `{"status":"ok"}`}, {"b", `{"status":"ok"}`}},
			hasPolicies: true},
		{name: "an empty policy ConfigMap exists: ok, and decides nothing",
			configMaps: []corev1.ConfigMap{policyConfigMap("empty", Rego, nil)},
			want:       []status{{"empty", `{"status":"ok"}`}}, hasPolicies: true},
		{name: "a Rego v0 module",
			configMaps:  []corev1.ConfigMap{policyConfigMap("v0", Rego, map[string]string{"old.rego": "package fleetpolicy.placement\nerrors[\"x\"] { true }\n"})},
			want:        []status{{"v0", `{"status":"error","error":"old.rego: old.rego:2: rego_parse_error: ` + "`if`" + ` keyword is required before rule body\nold.rego:2: rego_parse_error: ` + "`contains`" + ` keyword is required for partial set rules"}`}},
			hasPolicies: true, evaluateFail: "placement policy fleetpolicy-placement/v0[old.rego]: old.rego:2: rego_parse_error"},
		{name: "a Rego module of another package",
			configMaps:  []corev1.ConfigMap{policyConfigMap("pkg", Rego, map[string]string{"p.rego": "package elsewhere\n"})},
			want:        []status{{"pkg", `{"status":"error","error":"p.rego: p.rego:1: the policy is package data.elsewhere, want package fleetpolicy.placement"}`}},
			hasPolicies: true, evaluateFail: "want package fleetpolicy.placement"},
		{name: "Rego without I/O: http.send does not compile",
			configMaps:  []corev1.ConfigMap{regoPolicy("http", `errors contains http.send({"method": "get", "url": "https://example.com"}).body`)},
			want:        []status{{"http", `{"status":"error","error":"policy.rego: policy.rego:3: rego_type_error: undefined function http.send"}`}},
			hasPolicies: true, evaluateFail: "undefined function http.send"},
		{name: "a CEL policy with an undeclared variable, one with an unknown field, one good: each entry reported",
			configMaps: []corev1.ConfigMap{policyConfigMap("cel", CEL, map[string]string{
				"a.yaml": "match:\n- expression: size(selected) > 0\n",
				"b.yaml": "mtch: []\n",
				"c.yaml": euOnlyCEL,
			})},
			want:        []status{{"cel", `{"status":"error","error":"a.yaml: match[0].expression: ERROR: <input>:1:6: undeclared reference to 'selected' (in container '')\n | size(selected) > 0\n | .....^\nb.yaml: not a CEL placement policy document: error unmarshaling JSON: while decoding JSON: json: unknown field \"mtch\""}`}},
			hasPolicies: true, evaluateFail: "fleetpolicy-placement/cel[a.yaml]"},
		{name: "a language that is not one",
			configMaps:  []corev1.ConfigMap{policyConfigMap("py", "python", map[string]string{"p.py": "x"})},
			want:        []status{{"py", `{"status":"error","error":"metadata.labels[fleetpolicy.io/placement-policy]: \"python\" is not a policy language, want rego or cel"}`}},
			hasPolicies: true, evaluateFail: `"python" is not a policy language`},
		{name: "binaryData",
			configMaps:  []corev1.ConfigMap{binary},
			want:        []status{{"binary", `{"status":"error","error":"compiled.bin binaryData: binaryData is not read: a placement policy is text under data"}`}},
			hasPolicies: true, evaluateFail: "binaryData is not read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := New()
			if err := e.SetClusters(context.Background(), fleet); err != nil {
				t.Fatal(err)
			}
			got := []status{}
			for _, s := range e.Load(context.Background(), tc.configMaps) {
				got = append(got, status{s.ConfigMap, s.Annotation()})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("statuses\n%q\nwant\n%q", got, tc.want)
			}
			if e.HasPolicies() != tc.hasPolicies {
				t.Errorf("HasPolicies() = %v, want %v", e.HasPolicies(), tc.hasPolicies)
			}
			_, err := e.Evaluate(context.Background(), resource(nil))
			switch {
			case tc.evaluateFail == "" && err != nil:
				t.Errorf("Evaluate: %v", err)
			case tc.evaluateFail != "" && (err == nil || !strings.Contains(err.Error(), tc.evaluateFail)):
				t.Errorf("Evaluate error %v, want one with %q (fail closed while a policy is broken)", err, tc.evaluateFail)
			}
		})
	}
}

// programs returns the compiled program of every loaded policy.
func programs(e *Evaluator) map[PolicyID]Program {
	out := map[PolicyID]Program{}
	for _, entry := range e.policies.Load().entries {
		out[entry.id] = entry.program
	}
	return out
}

func TestHotReload(t *testing.T) {
	ctx := context.Background()
	payments := exampleResources(t)["Policy/payments"]
	clustersFor := func(t *testing.T, e *Evaluator) string {
		t.Helper()
		r, err := e.Evaluate(ctx, payments)
		if err != nil {
			t.Fatal(err)
		}
		return r.Annotations[ClustersAnnotation]
	}
	rego, cel := exampleConfigMap(t, "policy-rego.yaml"), exampleConfigMap(t, "policy-cel.yaml")
	e := loaded(t, exampleClusters(t), rego, cel)
	before := programs(e)
	if got := clustersFor(t, e); got != "eu-dublin,eu-frankfurt" {
		t.Fatalf("clusters %q", got)
	}

	t.Run("the same texts again (the status annotation written) compile nothing", func(t *testing.T) {
		rego.Annotations = map[string]string{StatusAnnotation: `{"status":"ok"}`}
		e.Load(ctx, []corev1.ConfigMap{rego, cel})
		if !reflect.DeepEqual(programs(e), before) {
			t.Error("unchanged policies were compiled again")
		}
	})
	t.Run("a changed policy is compiled and used; the other is kept", func(t *testing.T) {
		changed := cel.DeepCopy()
		changed.Data["eu-pci.yaml"] = strings.Replace(cel.Data["eu-pci.yaml"], `== "eu"`, `in ["eu", "us"]`, 1)
		statuses := e.Load(ctx, []corev1.ConfigMap{rego, *changed})
		if statuses[0].Annotation() != `{"status":"ok"}` {
			t.Fatal(statuses)
		}
		after := programs(e)
		if after[PolicyID{"eu-pci-rego", "eu-pci.rego"}] != before[PolicyID{"eu-pci-rego", "eu-pci.rego"}] ||
			after[PolicyID{"eu-pci-cel", "eu-pci.yaml"}] == before[PolicyID{"eu-pci-cel", "eu-pci.yaml"}] {
			t.Error("want only the changed policy compiled again")
		}
		// The CEL policy now also selects us-virginia, the Rego one does not:
		// the intersection is unchanged, and the explanation names who excludes it.
		r, err := e.Explain(ctx, payments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Clusters {
			if d.Cluster == "us-virginia" && (d.Allowed || d.Reasons[0].Policy.ConfigMap != "eu-pci-cel" || !d.Reasons[0].Allowed ||
				d.Reasons[1].Policy.ConfigMap != "eu-pci-rego" || d.Reasons[1].Allowed) {
				t.Errorf("us-virginia: %+v", d)
			}
		}
	})
	t.Run("a broken new version fails evaluation until it is fixed", func(t *testing.T) {
		broken := rego.DeepCopy()
		broken.Data["eu-pci.rego"] += "\nerrors contains x if {\n"
		if s := e.Load(ctx, []corev1.ConfigMap{*broken, cel}); s[1].Annotation() == `{"status":"ok"}` {
			t.Fatalf("statuses %v", s)
		}
		if _, err := e.Evaluate(ctx, payments); err == nil || !strings.Contains(err.Error(), "eu-pci-rego[eu-pci.rego]") {
			t.Errorf("error %v, want the broken policy named", err)
		}
		e.Load(ctx, []corev1.ConfigMap{rego, cel})
		if got := clustersFor(t, e); got != "eu-dublin,eu-frankfurt" {
			t.Errorf("clusters %q after the fix", got)
		}
	})
	t.Run("removing every policy", func(t *testing.T) {
		e.Load(ctx, nil)
		if e.HasPolicies() || clustersFor(t, e) != "" {
			t.Error("policies are still applied")
		}
	})
}

func TestInventoryUpdatesWithoutRecompiling(t *testing.T) {
	ctx := context.Background()
	payments := exampleResources(t)["Policy/payments"]
	for _, file := range []string{"policy-rego.yaml", "policy-cel.yaml"} {
		t.Run(file, func(t *testing.T) {
			e := loaded(t, exampleClusters(t), exampleConfigMap(t, file))
			compiled := programs(e)
			steps := []struct {
				name   string
				change func() error
				want   string
			}{
				{"as loaded", func() error { return nil }, "eu-dublin,eu-frankfurt"},
				{"a new EU cluster with PCI 4 joins", func() error {
					return e.PutCluster(ctx, Cluster{Name: "eu-madrid", Labels: map[string]string{"jurisdiction": "eu"},
						Claims: map[string]string{"pci-compliance-level": "4"}})
				}, "eu-dublin,eu-frankfurt,eu-madrid"},
				{"eu-dublin is relabelled out of the EU", func() error {
					return e.PutCluster(ctx, Cluster{Name: "eu-dublin", Labels: map[string]string{"jurisdiction": "us"},
						Claims: map[string]string{"pci-compliance-level": "2"}})
				}, "eu-frankfurt,eu-madrid"},
				{"eu-paris's PCI level is raised", func() error {
					return e.PutCluster(ctx, Cluster{Name: "eu-paris", Labels: map[string]string{"jurisdiction": "eu"},
						Claims: map[string]string{"pci-compliance-level": "2"}})
				}, "eu-frankfurt,eu-madrid,eu-paris"},
				{"eu-frankfurt leaves", func() error { return e.DeleteCluster(ctx, "eu-frankfurt") }, "eu-madrid,eu-paris"},
				{"deleting an unknown cluster", func() error { return e.DeleteCluster(ctx, "nowhere") }, "eu-madrid,eu-paris"},
				{"the inventory replaced", func() error {
					return e.SetClusters(ctx, []Cluster{{Name: "eu-x", Labels: map[string]string{"jurisdiction": "eu"},
						Claims: map[string]string{"pci-compliance-level": "9"}}})
				}, "eu-x"},
			}
			for _, step := range steps {
				if err := step.change(); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				r, err := e.Evaluate(ctx, payments)
				if err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if got := r.Annotations[ClustersAnnotation]; got != step.want {
					t.Errorf("%s: clusters %q, want %q", step.name, got, step.want)
				}
			}
			if !reflect.DeepEqual(programs(e), compiled) {
				t.Error("inventory changes compiled policies again")
			}
		})
	}
}

func TestInventoryErrors(t *testing.T) {
	ctx := context.Background()
	e := New()
	if err := e.SetClusters(ctx, []Cluster{{Name: "a"}, {Name: "a"}}); err == nil || err.Error() != `cluster "a" appears twice in the inventory` {
		t.Errorf("duplicate: %v", err)
	}
	if err := e.SetClusters(ctx, []Cluster{{Name: "a"}, {}}); err == nil || !strings.Contains(err.Error(), "has no name") {
		t.Errorf("no name: %v", err)
	}
	if err := e.PutCluster(ctx, Cluster{}); err == nil || !strings.Contains(err.Error(), "has no name") {
		t.Errorf("no name: %v", err)
	}
	if n := len(e.Inventory().Clusters()); n != 0 {
		t.Errorf("a refused change left %d clusters", n)
	}
}

// TestConcurrentUse evaluates while the policies and the inventory change; run
// with -race. Every evaluation sees one consistent policy version: either
// policy alone selects its own region.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	eu := celPolicy("region", euOnlyCEL)
	us := regoPolicy("region", `annotations["placement.fleetpolicy.io/clusters"] := concat(",", sort([n | some n, c in data.clusters; c.labels.region == "us"]))`)
	e := loaded(t, fleet, eu)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range 50 {
			e.Load(ctx, []corev1.ConfigMap{[]corev1.ConfigMap{eu, us}[i%2]})
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 50 {
			if err := e.PutCluster(ctx, Cluster{Name: "eu-3", Labels: map[string]string{"region": []string{"eu", "us"}[i%2]}}); err != nil {
				t.Error(err)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 100 {
			r, err := e.Evaluate(ctx, resource(nil))
			if err != nil {
				t.Error(err)
				return
			}
			switch r.Annotations[ClustersAnnotation] {
			case "eu-1,eu-2", "eu-1,eu-2,eu-3", "us-1", "eu-3,us-1":
			default:
				t.Errorf("inconsistent result %v", r.Annotations)
			}
		}
	}()
	wg.Wait()
}

// TestCELScopes checks that each part of a CEL policy sees exactly the
// variables the format gives it.
func TestCELScopes(t *testing.T) {
	cases := []struct {
		name, doc, undeclared string
	}{
		{"when reads no variables", "when: variables.x == 1\nerrors:\n- expression: 'true'\n", "variables"},
		{"variables read no cluster", "variables:\n- name: x\n  expression: cluster.name\nerrors:\n- expression: 'true'\n", "cluster"},
		{"match reads no selected", "match:\n- expression: size(selected) > 0\n", "selected"},
		{"errors read no cluster", "errors:\n- expression: cluster.name == 'a'\n", "cluster"},
		{"annotations read no cluster", "annotations:\n  a: cluster.name\n", "cluster"},
		{"messages read no selected in match", "match:\n- expression: 'true'\n  messageExpression: selected[0]\n", "selected"},
	}
	engine := NewCELEngine()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.Compile(context.Background(), PolicyID{ConfigMap: "scope"}, tc.doc)
			if err == nil || !strings.Contains(err.Error(), "undeclared reference to '"+tc.undeclared+"'") {
				t.Errorf("error %v, want %s undeclared", err, tc.undeclared)
			}
		})
	}
}
