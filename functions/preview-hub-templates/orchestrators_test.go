package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// TestThroughOrchestrators runs every golden case through kustomize, kpt fn
// render and kpt fn eval. Previews are local-config, which kustomize never
// emits: a build equals the build without the function. In a package, every
// file it had is left byte for byte and the new files are the golden
// previews, one a file, under previewDir.
func TestThroughOrchestrators(t *testing.T) {
	krmtest.Orchestrators{
		Function:      "preview-hub-templates",
		DefaultConfig: []byte("apiVersion: fn.fleetpolicy.io/v1alpha1\nkind: PreviewHubTemplates\nmetadata:\n  name: preview\n"),
		Package:       checkPreviewsWritten,
	}.Run(t)
}

// checkPreviewsWritten checks a package after the function ran on it.
func checkPreviewsWritten(t testing.TB, c krmtest.Case, before, after map[string]string) {
	t.Helper()
	for name, content := range before {
		if after[name] != content {
			t.Errorf("%s changed:\n--- got\n%s\n--- want\n%s", name, after[name], content)
		}
	}
	for name, content := range after {
		if _, had := before[name]; had {
			continue
		}
		if !strings.HasPrefix(name, previewDir+"/") {
			t.Errorf("the function wrote %s, outside %s/", name, previewDir)
		} else if n := len(krmtest.Objects(t, content)); n != 1 {
			t.Errorf("%s holds %d objects, want one preview", name, n)
		}
	}
	krmtest.CheckOutputs(t, c, after, func(n *yaml.RNode, file string) string {
		if n.GetAnnotations()[PreviewOfAnnotation] == "" || !strings.HasPrefix(file, previewDir+"/") {
			return ""
		}
		return file
	})
}
