package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"
)

// TestDemoConverges runs `make demo`'s job end to end — real API servers for the
// hub and each managed cluster, OCM's hub and agents, both controllers, the
// functions under kustomize — and checks that it shows each story and
// converges: the clusters joined through OCM registration, the spoke arrived
// as the fleetpolicy add-on with its hub kubeconfig, the rollout went wave by
// wave, the dependency resolved, the placement policy excluded clusters (by
// the labels and claims the clusters joined with), the OperatorPolicy reported
// its status.
func TestDemoConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short (make check): the demo starts four API servers and runs kustomize")
	}
	var out bytes.Buffer
	o := defaultOptions()
	err := run(context.Background(), &out, o)
	t.Log(out.String())
	if err != nil {
		t.Fatalf("demo failed: %v", err)
	}
	for _, want := range []string{
		`(?m)^==> rendering examples/demo`,
		`(?m)^==> the console: http://127\.0\.0\.1:\d+/ `,
		`(?m)eu-dublin\s+joined in .*ManagedClusterJoined=True.*ManagedClusterConditionAvailable=True`,
		`(?m)us-virginia\s+CSR us-virginia-\S+ from system:serviceaccount:open-cluster-management:agent-registration-bootstrap approved`,
		`(?m)eu-dublin\s+labels canary=true,jurisdiction=eu set on the hub; claims pci-compliance-level=1 reported`,
		`(?m)eu-frankfurt\s+ManifestWork addon-fleetpolicy-deploy-0 applied by the work agent: .*3 CustomResourceDefinition, 1 Deployment`,
		`(?m)eu-frankfurt\s+Secret fleetpolicy-system/fleetpolicy-hub-kubeconfig issued by OCM registration: CN=system:open-cluster-management:cluster:eu-frankfurt:addon:fleetpolicy:`,
		`(?m)us-virginia\s+ManifestApplied=True.*RegistrationApplied=True`,
		`(?m)^\s+Available=`,
		`(?m)wave: baseline-config enforcing on 1 cluster\(s\) of all-clusters/canary`,
		`(?m)baseline-config\s+us-virginia\s+Compliant\s+rollout Succeeded`,
		`(?m)payments-config\s+eu-frankfurt\s+Pending`,
		`(?m)payments-config\s+eu-frankfurt\s+Compliant`,
		`(?m)placement policies put payments-config on: eu-frankfurt`,
		`(?m)us-virginia\s+excluded .*not in the EU`,
		`(?m)cert-manager\s+eu-dublin\s+NonCompliant`,
		`(?m)^==> the fleet converged`,
		`(?m)^==> stopping`,
	} {
		if !regexp.MustCompile(want).Match(out.Bytes()) {
			t.Errorf("demo output lacks %s", want)
		}
	}
}
