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

// checkPreviewsWritten checks a package after the function ran on it: the
// previews are written as CheckWritten says, under previewDir (previewKey),
// one a file.
func checkPreviewsWritten(t testing.TB, c krmtest.Case, before, after map[string]string) {
	t.Helper()
	krmtest.CheckWritten(t, c, before, after, previewKey)
	for name, content := range after {
		if _, had := before[name]; !had {
			if n := len(krmtest.Objects(t, content)); n != 1 {
				t.Errorf("%s holds %d objects, want one preview", name, n)
			}
		}
	}
}

// previewKey names a preview by its file, which is under previewDir.
func previewKey(n *yaml.RNode, file string) string {
	if n.GetAnnotations()[PreviewOfAnnotation] == "" || !strings.HasPrefix(file, previewDir+"/") {
		return ""
	}
	return file
}
