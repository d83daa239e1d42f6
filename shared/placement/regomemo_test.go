package placement

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestRegoInputReads(t *testing.T) {
	for _, tc := range []struct {
		name, module string
		reads        [][]string // nil: not memoized
	}{
		{"a reference", `x := input.metadata.name`, [][]string{{"metadata", "name"}}},
		{"a reference with a variable", `x contains k if some k, _ in input.metadata.labels[_]`, [][]string{{"metadata", "labels"}}},
		{"a reference indexed by another", `x := input.spec[input.k]`, [][]string{{"spec"}, {"k"}}},
		{"a comprehension", `x := [i | some i in input.spec.items]`, [][]string{{"spec", "items"}}},
		{"object.get with a path", `x := object.get(input, ["metadata", "annotations"], {})`, [][]string{{"metadata", "annotations"}}},
		{"object.get with a key", `x := object.get(input, "spec", {})`, [][]string{{"spec"}}},
		{"object.get in a rule body", `x if object.get(input, ["a", "b"], "") == "c"`, [][]string{{"a", "b"}}},
		{"an import", "import input.metadata as md\nx := md.name", [][]string{{"metadata"}}},
		{"no input at all", `x := count(data.clusters)`, [][]string{}},
		{"the input itself", `x := input`, nil},
		{"the input passed to a function", `x := json.marshal(input)`, nil},
		{"the input passed to a rule's function", "f(o) := o.a\nx := f(input)", nil},
		{"object.get with a variable path", `x := object.get(input, [k], 1) if k := "a"`, nil},
		{"object.get with an empty path", `x := object.get(input, [], 1)`, nil},
		{"object.get with a number in the path", `x := object.get(input, ["a", 0], 1)`, nil},
		{"an index from the root", `x := input[_]`, nil},
		{"the input replaced", "y if input.a == 1\nx if { y with input as {\"a\": 1} }", nil},
		{"a path replaced", "y if input.a == 1\nx if { y with input.a as 1 }", nil},
		{"the whole input imported", "import input\nx := input.a", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			module, err := ast.ParseModuleWithOpts("p.rego", "package fleetpolicy.placement\n"+tc.module, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			reads, ok := regoInputReads(module)
			if ok != (tc.reads != nil) || ok && !reflect.DeepEqual(append([][]string{}, reads...), tc.reads) {
				t.Errorf("reads %q, memoized %v; want %q", reads, ok, tc.reads)
			}
		})
	}
}

func TestVerdictMemoKey(t *testing.T) {
	m := &verdictMemo{reads: [][]string{{"metadata", "annotations"}}}
	objects := map[string]map[string]any{
		"no metadata":             {},
		"metadata null":           {"metadata": nil},
		"metadata a string":       {"metadata": "x"},
		"no annotations":          {"metadata": map[string]any{}},
		"annotations null":        {"metadata": map[string]any{"annotations": nil}},
		"empty annotations":       {"metadata": map[string]any{"annotations": map[string]any{}}},
		"an annotation":           {"metadata": map[string]any{"annotations": map[string]any{"a": "1"}}},
		"another value":           {"metadata": map[string]any{"annotations": map[string]any{"a": "2"}}},
		"a number, not a text":    {"metadata": map[string]any{"annotations": map[string]any{"a": 1.0}}},
		"invalid UTF-8":           {"metadata": map[string]any{"annotations": map[string]any{"a": "\xff"}}},
		"other invalid UTF-8":     {"metadata": map[string]any{"annotations": map[string]any{"a": "\xfe"}}},
		"a list":                  {"metadata": map[string]any{"annotations": []any{"a", int64(1), uint64(2), nil, true}}},
		"a nested object":         {"metadata": map[string]any{"annotations": map[string]any{"a": map[string]any{"b": "1"}}}},
		"two annotations":         {"metadata": map[string]any{"annotations": map[string]any{"b": "1", "a": "2"}}},
		"two annotations swapped": {"metadata": map[string]any{"annotations": map[string]any{"b": "2", "a": "1"}}},
	}
	seen := map[string]string{}
	for name, obj := range objects {
		for _, explain := range []bool{false, true} {
			key, ok := m.key(obj, explain)
			if !ok {
				t.Fatalf("%s: no key", name)
			}
			if other, dup := seen[key]; dup {
				t.Errorf("%s (explain %v) and %s share key %q", name, explain, other, key)
			}
			seen[key] = fmt.Sprintf("%s (explain %v)", name, explain)
		}
	}
	if _, ok := m.key(map[string]any{"metadata": map[string]any{"annotations": struct{}{}}}, false); ok {
		t.Error("a value of a type JSON does not decode to has a key")
	}
	sameReads := map[string]any{"metadata": map[string]any{"name": "other", "annotations": map[string]any{"a": "1"}}, "spec": 1}
	if a, _ := m.key(objects["an annotation"], false); a != must(m.key(sameReads, false)) {
		t.Errorf("objects that differ only where the policy does not read have keys %q and %q", a, must(m.key(sameReads, false)))
	}
}

func must(key string, ok bool) string {
	if !ok {
		panic("no key")
	}
	return key
}

// TestMemoizedVerdicts proves that the memo answers a resource that reads the
// same as one evaluated before, that it answers with what evaluation gives,
// and that an inventory change is seen at once.
func TestMemoizedVerdicts(t *testing.T) {
	ctx := context.Background()
	e := loaded(t, exampleClusters(t), exampleConfigMap(t, "policy-rego.yaml"))
	program := e.policies.Load().entries[0].program.(*regoProgram)
	if program.memo == nil {
		t.Fatal("the example policy is not memoized")
	}
	unmemoized := *program
	unmemoized.memo = nil
	euPCI := func(name, level string) map[string]any {
		r := resource(map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": level})
		r["metadata"].(map[string]any)["name"] = name
		return r
	}
	memoized := func() int {
		program.memo.mu.Lock()
		defer program.memo.mu.Unlock()
		return len(program.memo.verdicts)
	}
	steps := []struct {
		name     string
		change   func() error
		resource map[string]any
		explain  bool
		memoized int
	}{
		{"first resource", nil, euPCI("a", "2"), false, 1},
		{"same annotations, another name", nil, euPCI("b", "2"), false, 1},
		{"same annotations, explained", nil, euPCI("b", "2"), true, 2},
		{"another level", nil, euPCI("c", "4"), false, 3},
		{"a level that is not a number", nil, euPCI("d", "x"), true, 4},
		{"no annotations", nil, resource(nil), false, 5},
		{"the inventory changes", func() error {
			return e.PutCluster(ctx, Cluster{Name: "eu-madrid", Labels: map[string]string{"jurisdiction": "eu"},
				Claims: map[string]string{"pci-compliance-level": "4"}})
		}, euPCI("a", "2"), false, 1},
		{"after the change, again", nil, euPCI("e", "2"), false, 1},
		{"after the change, explained", nil, euPCI("e", "4"), true, 2},
	}
	for _, step := range steps {
		if step.change != nil {
			if err := step.change(); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		want, err := unmemoized.Evaluate(ctx, NewResource(step.resource), step.explain)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		for range 2 {
			got, err := program.Evaluate(ctx, NewResource(step.resource), step.explain)
			if err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: memoized verdict %+v, evaluation gives %+v", step.name, got, want)
			}
		}
		if n := memoized(); n != step.memoized {
			t.Errorf("%s: %d verdicts memoized, want %d", step.name, n, step.memoized)
		}
	}
}

func TestVerdictMemoSize(t *testing.T) {
	m := &verdictMemo{}
	big := Verdict{Annotations: map[string]string{ClustersAnnotation: strings.Repeat("x", maxMemoSize/4)}}
	for i := range 3 {
		m.put(1, fmt.Sprint(i), big)
	}
	if len(m.verdicts) != 3 || m.size <= 3*maxMemoSize/4 {
		t.Fatalf("%d verdicts of %d bytes memoized, want 3 of more than %d", len(m.verdicts), m.size, 3*maxMemoSize/4)
	}
	m.put(1, "3", big)
	if len(m.verdicts) != 1 || m.size > maxMemoSize/3 {
		t.Errorf("a full memo holds %d verdicts of %d bytes after one more, want it to start over with 1", len(m.verdicts), m.size)
	}
	m.put(1, "3", big)
	if len(m.verdicts) != 1 || m.size > maxMemoSize/3 {
		t.Errorf("the same key put twice counts twice: %d bytes", m.size)
	}
	m.put(1, "huge", Verdict{Errors: []string{strings.Repeat("x", maxMemoSize)}})
	if _, found := m.get(1, "huge"); found {
		t.Error("a verdict larger than the memo was memoized")
	}
	m.put(2, "new", Verdict{})
	if _, found := m.get(1, "3"); found {
		t.Error("a verdict of an older inventory is still answered")
	}
	m.put(1, "late", Verdict{})
	if _, found := m.get(2, "late"); found {
		t.Error("a verdict evaluated against an older inventory was memoized")
	}
}

// TestRegoBuiltinsThatReadTheWorldDoNotCompile: a memoized verdict holds only
// if a policy cannot read the network, the clock or randomness.
func TestRegoBuiltinsThatReadTheWorldDoNotCompile(t *testing.T) {
	engine := NewRegoEngine()
	for call, compiles := range map[string]bool{
		`time.now_ns()`:                                                  false,
		`rand.intn("x", 10)`:                                             false,
		`json.match_schema({}, {})`:                                      false,
		`io.jwt.encode_sign({}, {}, {})`:                                 false,
		`providers.aws.sign_req({}, {}, 0)`:                              false,
		`crypto.x509.parse_and_verify_certificates("")`:                  false,
		`crypto.x509.parse_and_verify_certificates_with_options("", {})`: false,
		`crypto.x509.parse_certificates("")`:                             true,
		`time.parse_rfc3339_ns("2026-11-22T00:00:00Z")`:                  true,
	} {
		_, err := engine.Compile(context.Background(), PolicyID{ConfigMap: "p", Key: "p.rego"},
			"package fleetpolicy.placement\nx := "+call+"\n")
		if (err == nil) != compiles {
			t.Errorf("%s: compile error %v, want it to compile: %v", call, err, compiles)
		}
	}
}
