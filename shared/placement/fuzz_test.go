package placement

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzCELPolicy feeds arbitrary documents to the CEL engine: parsing and
// compiling never panic, and a policy that compiles evaluates (bounded by the
// cost limit) to a verdict or an error, without panicking, over a small
// inventory.
func FuzzCELPolicy(f *testing.F) {
	f.Add(exampleConfigMap(f, "policy-cel.yaml").Data["eu-pci.yaml"])
	f.Add(euOnlyCEL)
	f.Add("annotations:\n  a: 'string(size(selected))'\nerrors:\n- expression: 'object.kind == \"Policy\"'\n  messageExpression: 'object.metadata.name'\n")
	f.Add("variables:\n- name: x\n  expression: object.?spec.?items.orValue([])\nerrors:\n- expression: variables.x.all(i, i > 1)\n")
	f.Add(`{"match": [{"expression": "cluster.claims[?\"a\"].orValue(\"\") in [\"1\"]"}]}`)
	f.Add("when: 1\nmatch: [{expression: x}]\n")
	engine := NewCELEngine()
	inv, err := NewInventory(fleet)
	if err != nil {
		f.Fatal(err)
	}
	if err := engine.SetInventory(context.Background(), inv, nil); err != nil {
		f.Fatal(err)
	}
	obj := resource(map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "true"})
	obj["spec"] = map[string]any{"items": []any{1.0, "two", map[string]any{"three": true}}}
	f.Fuzz(func(t *testing.T, doc string) {
		_, parseErr := ParseCELPolicy(doc)
		program, err := engine.Compile(context.Background(), PolicyID{ConfigMap: "fuzz", Key: "p.yaml"}, doc)
		if err != nil {
			return
		}
		if parseErr != nil {
			t.Fatalf("compiled a document ParseCELPolicy refuses: %v", parseErr)
		}
		_, _ = program.Evaluate(context.Background(), NewResource(obj), true)
	})
}

// FuzzLoad feeds arbitrary policy ConfigMaps to Load: it never panics, reports
// a status per ConfigMap whose annotation is {"status":"ok"} or
// {"status":"error","error":...}, and evaluation fails exactly when a status
// is an error. Rego policies are compiled, not evaluated (Rego has no cost
// limit).
func FuzzLoad(f *testing.F) {
	f.Add("rego", "p.rego", exampleConfigMap(f, "policy-rego.yaml").Data["eu-pci.rego"], "")
	f.Add("cel", "p.yaml", euOnlyCEL, "")
	f.Add("rego", "", "package fleetpolicy.placement\nerrors contains 1\n", "b")
	f.Add("python", "x", "", "")
	f.Fuzz(func(t *testing.T, language, key, text, binaryKey string) {
		cm := policyConfigMap("fuzz", Language(language), map[string]string{key: text})
		if binaryKey != "" {
			cm.BinaryData = map[string][]byte{binaryKey: nil}
		}
		e := New()
		statuses := e.Load(context.Background(), nil)
		statuses = append(statuses, e.Load(context.Background(), []corev1.ConfigMap{cm})...)
		if len(statuses) != 1 || statuses[0].ConfigMap != "fuzz" {
			t.Fatalf("statuses %+v, want one for the ConfigMap", statuses)
		}
		var annotation struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal([]byte(statuses[0].Annotation()), &annotation); err != nil {
			t.Fatalf("status annotation %q: %v", statuses[0].Annotation(), err)
		}
		ok := annotation.Status == "ok" && annotation.Error == ""
		if !ok && (annotation.Status != "error" || annotation.Error == "") {
			t.Fatalf("status annotation %q", statuses[0].Annotation())
		}
		if language == string(Rego) && ok {
			return
		}
		_, err := e.Evaluate(context.Background(), resource(nil))
		if !ok && err == nil {
			t.Fatal("a broken policy did not fail evaluation")
		}
	})
}

// FuzzMemoizedVerdicts evaluates two resources in turn with the memoizing Rego
// programs and with the same programs unmemoized: whatever the first resource
// left in the memo, the verdicts on the second are the same. The policies read
// the input through references, indexes and object.get.
func FuzzMemoizedVerdicts(f *testing.F) {
	f.Add(`{"metadata":{"annotations":{"fleetpolicy.io/eu-jurisdiction-required":"true"}}}`,
		`{"metadata":{"name":"b","annotations":{"fleetpolicy.io/eu-jurisdiction-required":"true"}}}`)
	f.Add(`{"spec":{"a":"eu"},"k":"a"}`, `{"spec":{"a":"eu","b":"us"},"k":"b"}`)
	f.Add(`{"metadata":null}`, `{"metadata":{}}`)
	f.Add(`{"metadata":{"annotations":{"fleetpolicy.io/pci-compliance-level":"2","fleetpolicy.io/eu-jurisdiction-required":"true"}}}`,
		`{"metadata":{"annotations":{"fleetpolicy.io/pci-compliance-level":2,"fleetpolicy.io/eu-jurisdiction-required":"true"}}}`)
	ctx := context.Background()
	e := loaded(f, exampleClusters(f), exampleConfigMap(f, "policy-rego.yaml"),
		regoPolicy("indexed", `annotations["fleetpolicy.io/indexed"] := sprintf("%v", [input.spec[input.k]])`),
		regoPolicy("object-get", `errors contains "denied" if object.get(input, ["metadata", "labels", "deny"], "no") == "yes"`))
	var programs []*regoProgram
	for _, entry := range e.policies.Load().entries {
		p := entry.program.(*regoProgram)
		if p.memo == nil {
			f.Fatalf("%s is not memoized", entry.id)
		}
		programs = append(programs, p)
	}
	f.Fuzz(func(t *testing.T, first, second string) {
		var a, b map[string]any
		if json.Unmarshal([]byte(first), &a) != nil || json.Unmarshal([]byte(second), &b) != nil || a == nil || b == nil {
			return
		}
		for _, p := range programs {
			unmemoized := *p
			unmemoized.memo = nil
			for _, explain := range []bool{false, true} {
				_, _ = p.Evaluate(ctx, NewResource(a), explain)
				got, gotErr := p.Evaluate(ctx, NewResource(b), explain)
				want, wantErr := unmemoized.Evaluate(ctx, NewResource(b), explain)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, explain %v, after %s: memoized %+v, %v; evaluated %+v, %v", p.id, explain, first, got, gotErr, want, wantErr)
				}
			}
		}
	})
}
