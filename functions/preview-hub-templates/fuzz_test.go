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
	for _, c := range krmtest.Cases(f, "testdata") {
		if c.Name != "timeout" {
			f.Add(c.ResourceList(f))
		}
	}
	f.Add([]byte(krmtest.AliasedItems))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 1\n- [a]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1\n  kind: Policy\n  metadata: {name: p, namespace: n}\n  spec: {policy-templates: [{objectDefinition: {kind: '{{hub .ManagedClusterName hub}}'}}]}\n- apiVersion: cluster.open-cluster-management.io/v1\n  kind: ManagedCluster\n  metadata: {name: c, labels: {a: [1]}}\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s, namespace: n}\n  data: {k: 7}\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		in, got, _, ok := krmtest.FuzzRun(t, previewHubTemplates, input)
		if !ok {
			return
		}
		var kept, want []*fn.KubeObject
		for _, item := range got.Items {
			if !isPreview(item) {
				kept = append(kept, item)
			}
		}
		for _, item := range in.Items {
			if !isPreview(item) {
				want = append(want, item)
			}
		}
		if len(kept) != len(want) {
			t.Fatalf("%d items in, %d out", len(want), len(kept))
		}
		for i := range want {
			if kept[i].String() != want[i].String() {
				t.Fatalf("item %d changed:\n--- got\n%s\n--- want\n%s", i, kept[i].String(), want[i].String())
			}
		}
	})
}
