package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestSecretsNeverInClear runs every case and fails when a value of a Secret
// of its input, base64 or decoded, appears in a preview or a result: the
// previews show encrypted values redacted and lookups of Secrets redacted.
func TestSecretsNeverInClear(t *testing.T) {
	checked := 0
	for _, c := range krmtest.Cases(t, "testdata") {
		t.Run(c.Name, func(t *testing.T) {
			items, err := (&kio.ByteReader{Reader: strings.NewReader(string(c.Items))}).Read()
			if err != nil {
				t.Fatal(err)
			}
			var values []string
			for _, item := range items {
				if item.GetKind() != "Secret" {
					continue
				}
				for _, v := range item.GetDataMap() {
					values = append(values, v)
					if decoded, err := base64.StdEncoding.DecodeString(v); err == nil {
						values = append(values, string(decoded))
					}
				}
			}
			out, stderr, _ := c.Run(t, previewHubTemplates)
			rl, err := fn.ParseResourceList(out)
			if err != nil {
				t.Fatal(err)
			}
			var shown strings.Builder
			shown.Write(stderr)
			for _, item := range rl.Items {
				if item.GetAnnotation(PreviewOfAnnotation) != "" {
					shown.WriteString(item.String())
				}
			}
			for _, r := range rl.Results {
				shown.WriteString(r.Message)
			}
			for _, v := range values {
				checked++
				if strings.Contains(shown.String(), v) {
					t.Errorf("the value %q of a Secret is shown in clear:\n%s", v, shown.String())
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no case holds a Secret: the test checks nothing")
	}
}

// TestStderrHoldsOnlyResults checks that the template library's own logging
// (klog v1, which prints every failed template) does not reach stderr: every
// line there is one of the function's results.
func TestStderrHoldsOnlyResults(t *testing.T) {
	for _, c := range krmtest.Cases(t, "testdata") {
		if c.Name != "errors" {
			continue
		}
		_, stderr, code := c.Run(t, previewHubTemplates)
		if code != 1 || len(stderr) == 0 {
			t.Fatalf("exit code %d, stderr %q: want the errors", code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(stderr), "\n"), "\n") {
			if !strings.HasPrefix(line, "preview-hub-templates: error: ") {
				t.Errorf("stderr holds %q", line)
			}
		}
		return
	}
	t.Fatal("no errors case")
}
