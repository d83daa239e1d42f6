package main

import (
	"testing"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// FuzzExpandOperatorPolicy feeds arbitrary input to the function. It must
// never panic and always answer with a ResourceList and exit code 0 or 1. A
// failed run gives back every item unchanged; a passing run gives back every
// item it does not own unchanged and in order, and running it again on its
// own output passes and changes nothing.
func FuzzExpandOperatorPolicy(f *testing.F) {
	krmtest.AddSeeds(f, nil,
		"kind: ResourceList\nitems:\n- apiVersion: policy.open-cluster-management.io/v1beta1\n  kind: OperatorPolicy\n  metadata: x\n  spec: [1]\n",
		"kind: ResourceList\nitems:\n- {apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy, metadata: {name: a}, "+
			"spec: {remediationAction: enforce, subscription: {name: a, source: s, sourceNamespace: o}, operatorGroup: {selector: {}}}}\n",
		"kind: ResourceList\nfunctionConfig: {apiVersion: fn.fleetpolicy.io/v1alpha1, kind: ExpandOperatorPolicy, mode: policy, placement: {name: p, labelSelector: {matchLabels: {a: b}}}}\n"+
			"items:\n- {apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy, metadata: {name: a, namespace: n, annotations: {config.kubernetes.io/path: a.yaml}}, spec: {subscription: {name: a, namespace: b}}}\n")
	f.Fuzz(func(t *testing.T, input []byte) {
		in, out, code, ok := krmtest.FuzzRun(t, expandOperatorPolicy, input)
		if !ok {
			return
		}
		if code == 1 { // a failed run gives back every item unchanged
			krmtest.CheckPassedThrough(t, in.Items, out.Items, nil)
			return
		}
		checkOthersKept(t, in.Items, out.Items)
		runAgain(t, out, in.FunctionConfig)
	})
}
