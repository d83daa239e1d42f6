package crdtest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

func parseOne(t *testing.T, doc string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := localplane.ReadManifests("test case", strings.NewReader(doc))
	if err != nil || len(objs) != 1 {
		t.Fatalf("parsing test case: %v (%d objects)", err, len(objs))
	}
	return objs
}

// mergePatch applies patch to obj with JSON merge patch rules (RFC 7386): objects
// merge recursively, null deletes, anything else replaces.
func mergePatch(obj, patch map[string]any) {
	for k, pv := range patch {
		if pv == nil {
			delete(obj, k)
			continue
		}
		pm, pIsMap := pv.(map[string]any)
		om, oIsMap := obj[k].(map[string]any)
		if pIsMap && oIsMap {
			mergePatch(om, pm)
			continue
		}
		obj[k] = pv
	}
}
