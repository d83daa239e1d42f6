package main

import (
	"slices"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// FuzzExpandOperatorPolicy feeds arbitrary input to the function. It must
// never panic and always answer with a ResourceList and exit code 0 or 1. A
// failed run gives back every item unchanged; a passing run gives back every
// item it does not own unchanged and in order, and running it again on its
// own output passes and changes nothing.
func FuzzExpandOperatorPolicy(f *testing.F) {
	for _, c := range krmtest.Cases(f, "testdata") {
		f.Add(c.ResourceList(f))
	}
	f.Add([]byte(krmtest.AliasedItems))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 1\n- [a]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1beta1\n  kind: OperatorPolicy\n  metadata: x\n  spec: [1]\n"))
	f.Add([]byte("kind: ResourceList\nitems:\n- {apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy, metadata: {name: a}, " +
		"spec: {remediationAction: enforce, subscription: {name: a, source: s, sourceNamespace: o}, operatorGroup: {selector: {}}}}\n"))
	f.Add([]byte("kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: ExpandOperatorPolicy, mode: policy, placement: {name: p, labelSelector: {matchLabels: {a: b}}}}\n" +
		"items:\n- {apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy, metadata: {name: a, namespace: n, annotations: {config.kubernetes.io/path: a.yaml}}, spec: {subscription: {name: a, namespace: b}}}\n"))
	f.Fuzz(func(t *testing.T, input []byte) {
		in, out, code, ok := krmtest.FuzzRun(t, expandOperatorPolicy, input)
		if !ok {
			return
		}
		if code == 1 {
			if !slices.Equal(itemStrings(out.Items), itemStrings(in.Items)) {
				t.Fatalf("a failed run changed the items:\n--- got\n%v\n--- want\n%v", itemStrings(out.Items), itemStrings(in.Items))
			}
			return
		}
		others := newPackage(in.Items).others
		var kept, want []string
		for _, item := range in.Items {
			if !isOwned(item) {
				want = append(want, item.String())
			}
		}
		for _, item := range out.Items {
			if _, found := others[idOf(item)]; found {
				kept = append(kept, item.String())
			}
		}
		if !slices.Equal(kept, want) {
			t.Fatalf("items the function does not own changed:\n--- got\n%v\n--- want\n%v", kept, want)
		}

		out.FunctionConfig, out.Results = in.FunctionConfig, nil
		again, err := out.ToYAML()
		if err != nil {
			t.Fatal(err)
		}
		second, code := krmtest.RunParsed(t, expandOperatorPolicy, again)
		if code != 0 {
			t.Fatalf("the second run failed: %v", second.Results)
		}
		if !slices.Equal(itemStrings(second.Items), itemStrings(out.Items)) {
			t.Fatalf("the second run changed the items:\n--- got\n%v\n--- want\n%v", itemStrings(second.Items), itemStrings(out.Items))
		}
	})
}

// run runs the function on input and returns its output, which must be a
// ResourceList, and its exit code, which must be 0 or 1.
