package localplane

import (
	"fmt"
)

// OCMPolicyCRDs is where `make generate` copies OCM v0.19's policy CRDs
// (relative to the repository root): what OCM's policy add-ons install on a
// managed cluster, in place of fleetpolicy's.
const OCMPolicyCRDs = "controllers/internal/crdtest/testdata/ocm-v0.19.0"

// OCMPolicyAgents are OCM's policy agents on one managed cluster, the binaries
// `make ocm-policy-binaries` builds: the governance-policy-framework add-on
// (policy sync and status) and the config-policy-controller.
type OCMPolicyAgents struct {
	Addon   *Process
	Configs *Process
	// AddonProbe and ConfigsProbe are the addresses of their health probes
	// (/readyz).
	AddonProbe, ConfigsProbe string
}

// StartOCMPolicyAgents starts OCM's framework add-on and config-policy-controller
// for cluster against the managed plane p (which must serve OCM's policy CRDs
// and have the cluster's namespace), reaching the hub with the kubeconfig file
// hubKubeconfig; without leader election, leases, Gatekeeper sync or
// OperatorPolicies, their probes and metrics on free local ports. Stop ends both.
func StartOCMPolicyAgents(p *Plane, cluster, hubKubeconfig string) (*OCMPolicyAgents, error) {
	addonArgs := []string{"--hub-cluster-configfile=" + hubKubeconfig, "--managed-cluster-configfile=" + p.KubeconfigPath,
		"--cluster-namespace=" + cluster, "--leader-elect=false", "--disable-gatekeeper-sync", "--enable-lease=false"}
	configArgs := []string{"controller", "--cluster-name=" + cluster, "--leader-elect=false", "--enable-lease=false",
		"--enable-operator-policy=false"}
	a := &OCMPolicyAgents{}
	probes := []*string{&a.AddonProbe, &a.ConfigsProbe}
	for i, args := range []*[]string{&addonArgs, &configArgs} {
		probe, err := FreeAddress()
		if err != nil {
			return nil, err
		}
		*probes[i] = probe
		metrics, err := FreeAddress()
		if err != nil {
			return nil, err
		}
		*args = append(*args, "--health-probe-bind-address="+probe, "--metrics-bind-address="+metrics)
	}
	local := []string{"OSDK_FORCE_RUN_MODE=local", "KUBECONFIG=" + p.KubeconfigPath, "WATCH_NAMESPACE=" + cluster}
	var err error
	if a.Addon, err = StartProcess("ocm-framework-addon", "ocm-policy-binaries", addonArgs, local); err != nil {
		return nil, err
	}
	if a.Configs, err = StartProcess("ocm-config-policy-controller", "ocm-policy-binaries", configArgs, local); err != nil {
		a.Addon.Stop()
		return nil, err
	}
	return a, nil
}

// Stop ends both agents.
func (a *OCMPolicyAgents) Stop() {
	a.Addon.Stop()
	a.Configs.Stop()
}

// LogTails is the last lines of both agents' logs, for a failure message.
func (a *OCMPolicyAgents) LogTails(cluster string, lines int) string {
	return fmt.Sprintf("--- %s framework-addon:\n%s\n--- %s config-policy-controller:\n%s",
		cluster, a.Addon.LogTail(lines), cluster, a.Configs.LogTail(lines))
}
