package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestThroughOrchestrators runs every golden case through kustomize, kpt fn
// render and kpt fn eval. A build holds the expected objects but the
// local-config ones, which kustomize never emits, and building it through
// the function again gives the same build. In a package, resources.yaml holds
// the expected objects and the items the function does not own exactly as
// written, and no other file changed or appeared.
func TestThroughOrchestrators(t *testing.T) {
	krmtest.Orchestrators{
		Function:      "expand-operator-policy",
		DefaultConfig: []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: ExpandOperatorPolicy\nmetadata:\n  name: expand-operator-policy\n"),
		Build: func(t testing.TB, k krmtest.KustomizeRun, c krmtest.Case, stdout string) {
			t.Helper()
			checkObjects(t, c, stdout, false)
			if again := k.Build(t, []byte(stdout)); again != stdout {
				t.Errorf("the second build differs:\n--- got\n%s\n--- want\n%s", again, stdout)
			}
		},
		Package: func(t testing.TB, c krmtest.Case, before, after map[string]string) {
			t.Helper()
			resources := after["resources.yaml"]
			checkObjects(t, c, resources, true)
			for _, doc := range otherDocuments(t, c) {
				if !strings.Contains(resources, doc) {
					t.Errorf("resources.yaml does not hold, as written:\n%s\nresources.yaml:\n%s", doc, resources)
				}
			}
			for name, content := range after {
				if name != "resources.yaml" && content != before[name] {
					t.Errorf("%s changed:\n--- got\n%s\n--- want\n%s", name, content, before[name])
				}
			}
			for name := range before {
				if _, kept := after[name]; !kept {
					t.Errorf("%s was removed", name)
				}
			}
		},
	}.Run(t)
}

// checkObjects fails the test unless stream holds exactly the objects of the
// case's expected output, in any order (kustomize leaves out local-config
// ones: withLocalConfig false).
func checkObjects(t testing.TB, c krmtest.Case, stream string, withLocalConfig bool) {
	t.Helper()
	got := krmtest.SortedByIdentity(krmtest.Objects(t, stream))
	want := krmtest.SortedByIdentity(krmtest.Objects(t, string(c.ExpectedItems(t, withLocalConfig))))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects differ from the golden output:\n--- got\n%v\n--- want\n%v", got, want)
	}
}

// otherDocuments are the documents of input.yaml the function does not own,
// as written.
func otherDocuments(t testing.TB, c krmtest.Case) []string {
	t.Helper()
	var docs []string
	for _, doc := range strings.Split(strings.TrimSuffix(string(c.Items), "\n"), "\n---\n") {
		obj, err := fn.ParseKubeObject([]byte(doc))
		if err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		if !isOwned(obj) {
			docs = append(docs, doc+"\n")
		}
	}
	return docs
}
