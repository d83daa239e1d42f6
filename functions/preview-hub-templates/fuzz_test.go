package main

import (
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// isPreview reports whether item is a preview, this function's output.
func isPreview(item *fn.KubeObject) bool {
	return isLocalConfig(item) && krm.AnnotationOf(item, PreviewOfAnnotation) != ""
}

// FuzzPreviewHubTemplates feeds arbitrary input to the function: it must never
// panic, must always answer with a ResourceList and exit code 0 or 1, and must
// give back every item of a readable input that is not a preview unchanged and
// in order. (The timeout case is not a seed: its template keeps a CPU busy for
// seconds after the preview gives up.)
func FuzzPreviewHubTemplates(f *testing.F) {
	krmtest.AddSeeds(f, func(c krmtest.Case) bool { return c.Name == "timeout" },
		"kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1\n  kind: Policy\n  metadata: {name: p, namespace: n}\n  spec: {policy-templates: [{objectDefinition: {kind: '{{hub .ManagedClusterName hub}}'}}]}\n- apiVersion: cluster.open-cluster-management.io/v1\n  kind: ManagedCluster\n  metadata: {name: c, labels: {a: [1]}}\n",
		"kind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s, namespace: n}\n  data: {k: 7}\n")
	f.Fuzz(func(t *testing.T, input []byte) {
		if in, got, _, ok := krmtest.FuzzRun(t, previewHubTemplates, input); ok {
			krmtest.CheckPassedThrough(t, in.Items, got.Items, isPreview)
		}
	})
}
