package functions_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestFunctionsAnswerAliasesWithoutPanicking runs every function of the
// catalog on items holding YAML aliases where the kpt SDK's accessors panic
// (krmtest.AliasedItems): each answers with exit code 1 (a Go panic exits 2),
// an error naming an aliased field of an item it reads (or, for
// expand-operator-policy, which follows the alias it reads, what is wrong
// with the OperatorPolicy; preview-hub-templates follows every alias, and
// these items hold no hub template: exit code 0 and nothing to say), and
// the items as they came in.
func TestFunctionsAnswerAliasesWithoutPanicking(t *testing.T) {
	_, cat := readCatalog(t)
	in, err := fn.ParseResourceList([]byte(krmtest.AliasedItems))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cat.Functions {
		binary := krmtest.BuildFunction(t, f.Name)
		t.Run(f.Name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), binary)
			cmd.Stdin = strings.NewReader(krmtest.AliasedItems)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			var exit *exec.ExitError
			err := cmd.Run()
			if f.Name == "preview-hub-templates" {
				if err != nil || stderr.Len() > 0 {
					t.Fatalf("%v, want exit code 0 and nothing on stderr:\n%s", err, stderr.String())
				}
			} else if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("%v, want exit code 1:\n%s", err, stderr.String())
			}
			// expand-operator-policy reads no Policy, and reads its
			// OperatorPolicy following the alias of its labels.
			want := f.Name + ": error: Policy n/b metadata.annotations: is a YAML alias (*a)"
			if f.Name == "expand-operator-policy" {
				want = f.Name + ": error: OperatorPolicy n/o spec.subscription.name: Required value"
			}
			if f.Name != "preview-hub-templates" && !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			out, err := fn.ParseResourceList(stdout.Bytes())
			if err != nil {
				t.Fatalf("output is not a ResourceList: %v\n%s", err, stdout.String())
			}
			if len(out.Items) != len(in.Items) {
				t.Fatalf("%d items out, %d in:\n%s", len(out.Items), len(in.Items), stdout.String())
			}
			for i := range in.Items {
				if got, want := out.Items[i].String(), in.Items[i].String(); got != want {
					t.Errorf("item %d changed:\n--- got\n%s\n--- want\n%s", i, got, want)
				}
			}
		})
	}
}

// unrelatedAliasedItems holds YAML aliases only in a Deployment and a
// Service, kinds no function reads, next to a Policy none of them has anything to say about.
const unrelatedAliasedItems = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: &m
    name: web
    namespace: n
    labels: &l
      app: web
    annotations: *l
  spec:
    selector:
      matchLabels: *l
- apiVersion: v1
  kind: Service
  metadata: *m
- apiVersion: policy.open-cluster-management.io/v1
  kind: Policy
  metadata:
    name: p
    namespace: n
  spec:
    disabled: false
    policy-templates: []
`

// passThroughCases are packages on which every function of the catalog
// succeeds and writes the first kept items as they came in, in their place.
var passThroughCases = []struct {
	name, input string
	kept        int
}{
	// Only items of kinds no function reads hold YAML aliases.
	{"aliases in unread kinds", unrelatedAliasedItems, 2},
	// OCM's object-template fields, which no function reads.
	{"configuration policy fields", configurationPolicyFields, 2},
}

// TestItemsPassThrough runs every function of the catalog on each of
// passThroughCases (each function built once).
func TestItemsPassThrough(t *testing.T) {
	_, cat := readCatalog(t)
	for _, f := range cat.Functions {
		binary := krmtest.BuildFunction(t, f.Name)
		for _, c := range passThroughCases {
			t.Run(f.Name+"/"+c.name, func(t *testing.T) {
				in, err := fn.ParseResourceList([]byte(c.input))
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.CommandContext(t.Context(), binary)
				cmd.Stdin = strings.NewReader(c.input)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v, want success:\n%s", err, stderr.String())
				}
				out, err := fn.ParseResourceList(stdout.Bytes())
				if err != nil {
					t.Fatalf("output is not a ResourceList: %v\n%s", err, stdout.String())
				}
				for i := range c.kept {
					if len(out.Items) <= i || out.Items[i].String() != in.Items[i].String() {
						t.Errorf("the %s did not pass through in its place:\n%s", in.Items[i].GetKind(), stdout.String())
					}
				}
			})
		}
	}
}
