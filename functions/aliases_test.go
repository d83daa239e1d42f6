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
// an error naming an aliased field, and the items as they came in.
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
			if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("%v, want exit code 1:\n%s", err, stderr.String())
			}
			if want := f.Name + ": error: Policy n/b metadata.annotations: is a YAML alias (*a)"; !strings.Contains(stderr.String(), want) {
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
