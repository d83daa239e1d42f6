package interoptest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

// hopTimeout bounds each hop: OCM's add-ons start slowly on a loaded machine.
const hopTimeout = 120 * time.Second

// ocmCRDs are OCM v0.19.0's policy CRDs, as `make generate` copies them from
// the pinned modules; where OCM's components run (the managed clusters of
// direction 1, the hub of direction 2) the API server gets these rather than
// ours.
const ocmCRDs = localplane.OCMPolicyCRDs

// ocmSpoke is one managed cluster running OCM's spoke components.
type ocmSpoke struct {
	name   string
	plane  *localplane.Plane
	agents *localplane.OCMPolicyAgents
}

// logs is the tail of both components' logs, for a failure message.
func (s *ocmSpoke) logs() string { return s.agents.LogTails(s.name, 15) }

// startOCMSpoke registers cluster on the hub, gives it the hub identity
// manifests/spoke/hub documents, installs OCM's CRDs on its API server and
// starts OCM's framework add-on and config-policy-controller against it.
func startOCMSpoke(t *testing.T, hubPlane, plane *localplane.Plane, cluster string) *ocmSpoke {
	t.Helper()
	hubKubeconfig := hubIdentity(t, hubPlane, cluster)
	installOCMCRDs(t, plane)
	if err := localplane.EnsureNamespace(context.Background(), plane.Client, cluster); err != nil {
		t.Fatal(err)
	}

	agents, err := localplane.StartOCMPolicyAgents(plane, cluster, hubKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(agents.Stop)
	return &ocmSpoke{name: cluster, plane: plane, agents: agents}
}

// managed is the view the hops take of a managed cluster's API server,
// whichever agents run there.
func (s *ocmSpoke) managed() managedCluster {
	return managedCluster{name: s.name, client: s.plane.Client, logs: s.logs}
}

// hubIdentity registers cluster on the hub, gives it the hub identity
// manifests/spoke/hub documents (the ServiceAccount fleetpolicy-spoke of the
// cluster's namespace and its Role) and returns a kubeconfig that reaches the
// hub as that identity, with a token: no admin.
func hubIdentity(t *testing.T, hubPlane *localplane.Plane, cluster string) string {
	t.Helper()
	ctx := context.Background()
	root := testkit.RepoRoot(t)
	if err := localplane.EnsureCluster(ctx, hubPlane.Client, cluster); err != nil {
		t.Fatal(err)
	}
	applyFile(t, hubPlane.Client, filepath.Join(root, "manifests/spoke/hub/rbac.yaml"), cluster)
	token, err := localplane.ServiceAccountToken(ctx, hubPlane.Client, cluster, "fleetpolicy-spoke")
	if err != nil {
		t.Fatal(err)
	}
	return tokenKubeconfig(t, hubPlane, token)
}

// installOCMCRDs applies OCM v0.19.0's policy CRDs (ocmCRDs) on plane, in
// place of fleetpolicy's.
func installOCMCRDs(t *testing.T, plane *localplane.Plane) {
	t.Helper()
	root := testkit.RepoRoot(t)
	crds, err := localplane.ManifestFiles(filepath.Join(root, ocmCRDs))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range crds {
		applyFile(t, plane.Client, f, "")
	}
}

// listenerFlags are the probe and metrics address flags of an upstream
// controller, on free local ports.
func listenerFlags(t *testing.T) []string {
	t.Helper()
	probe, err := localplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := localplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--health-probe-bind-address=" + probe, "--metrics-bind-address=" + metrics}
}

// applyFile applies a manifest file, in namespace when not empty.
func applyFile(t *testing.T, c client.Client, path, namespace string) {
	t.Helper()
	objs, err := localplane.ReadManifestFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if namespace != "" {
		for _, o := range objs {
			o.SetNamespace(namespace)
		}
		for _, o := range objs {
			if o.GetKind() == "RoleBinding" {
				subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
				for _, s := range subjects {
					s.(map[string]any)["namespace"] = namespace
				}
				_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
			}
		}
	}
	if _, err := localplane.Apply(context.Background(), c, objs); err != nil {
		t.Fatal(err)
	}
}

// tokenKubeconfig writes a kubeconfig that reaches plane with a bearer token.
func tokenKubeconfig(t *testing.T, plane *localplane.Plane, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: plane.Config.Host, CertificateAuthorityData: plane.Config.CAData}
	cfg.AuthInfos["spoke"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["spoke"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "spoke"}
	cfg.CurrentContext = "spoke"
	path := filepath.Join(t.TempDir(), "hub-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFleetpolicyHubWithOCMSpoke: a policy q that depends on p stays Pending
// until p exists and is Compliant, then rolls out per decision group.
// fleetpolicy's hub replicates an enforce
// policy with a Progressive rollout (one cluster at a time) to two managed
// clusters running OCM's framework add-on and config-policy-controller, which
// sync, enforce and report it; the reports reach the replicas and the root,
// and the rollout completes. A binding override enforces an inform policy s on
// cluster1 only. A cluster leaving the placement loses its replica
// and its managed Policy. Deleting the root removes the replicas and, through
// the add-on, the managed clusters' Policies.
func TestFleetpolicyHubWithOCMSpoke(t *testing.T) {
	fleet := testkit.StartFleet(t, 2)
	ctx := context.Background()
	hubClient := fleet.Hub.Client
	hubtest.Start(t, fleet.Hub.Config, nil)
	clusters := []string{"cluster1", "cluster2"}
	spokes := make([]*ocmSpoke, len(clusters))
	managed := make([]managedCluster, len(clusters))
	for i, cluster := range clusters {
		spokes[i] = startOCMSpoke(t, fleet.Hub, fleet.Spokes[i], cluster)
		managed[i] = spokes[i].managed()
	}
	allLogs := func() string { return joinLogs(managed) }
	a := agents{hub: "fleetpolicy hub", spoke: "OCM add-on", evaluator: "config-policy-controller"}

	if err := localplane.EnsureNamespace(ctx, hubClient, "interop"); err != nil {
		t.Fatal(err)
	}
	// q, applied before p, depends on p being Compliant and rolls out per
	// decision group (cluster1, then cluster2): it stays Pending until p is.
	applyPolicy(t, hubClient, "q", "enforce", "{type: ProgressivePerGroup}",
		"\n  - {apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: p, compliance: Compliant}",
		[]string{"cluster1"}, []string{"cluster2"})
	// The Pending message is OCM's add-on's word for word: the one the
	// spoke's template sync writes (shared/dependency) for the same wait.
	pendingMessage := "Pending; " + dependency.Evaluate([]dependency.Requirement{{
		Target: dependency.Ref{Group: policyv1.GroupVersion.Group, Kind: "Policy", Name: "interop.p"}, Compliance: policyv1.Compliant,
	}}, false, nil).Message()
	for _, m := range managed {
		checkReplicaCompliance(t, hubClient, m, "q", policyv1.Pending, "dependency gating (OCM add-on: q Pending while p is missing)")
		hop(t, m, "the Pending message (OCM add-on's, as fleetpolicy's spoke writes it)", func() string {
			r := &policyv1.Policy{}
			if err := hubClient.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "interop.q"}, r); err != nil {
				return err.Error()
			}
			if len(r.Status.Details) == 0 || len(r.Status.Details[0].History) == 0 {
				return fmt.Sprintf("replica q has no history: %+v", r.Status)
			}
			if got := r.Status.Details[0].History[0].Message; got != pendingMessage {
				return fmt.Sprintf("newest message %q, fleetpolicy's spoke writes %q", got, pendingMessage)
			}
			return ""
		})
	}
	applyPolicy(t, hubClient, "p", "enforce", "{type: Progressive, progressive: {maxConcurrency: 1}}", " []", clusters)

	for i, cluster := range clusters {
		checkPolicyReaches(t, hubClient, managed[i], a, "p")
		hop(t, managed[i], "status sync Event on the hub (OCM add-on writes events.k8s.io Events with the hub Role)", func() string {
			events := &corev1.EventList{}
			if err := hubClient.List(ctx, events, client.InNamespace(cluster)); err != nil {
				return err.Error()
			}
			for _, e := range events.Items {
				if e.Reason == "PolicyStatusSync" {
					return ""
				}
			}
			return fmt.Sprintf("no PolicyStatusSync Event among %d in %s", len(events.Items), cluster)
		})
	}
	testkit.Eventually(t, hopTimeout, "hop \"status to the root and Progressive rollout to completion\"", func() string {
		root := &policyv1.Policy{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: "interop", Name: "p"}, root); err != nil {
			return err.Error()
		}
		s := root.Status
		perCluster := map[string]string{}
		for _, e := range s.Status {
			perCluster[e.ClusterName] = string(e.ComplianceState) + "/" + string(e.RolloutStatus)
		}
		want := map[string]string{"cluster1": "Compliant/Succeeded", "cluster2": "Compliant/Succeeded"}
		if s.ComplianceState != policyv1.Compliant || s.RolloutStatus != policyv1.RolloutSucceeded || fmt.Sprint(perCluster) != fmt.Sprint(want) {
			return fmt.Sprintf("root compliant %q rolloutStatus %q clusters %v\n%s", s.ComplianceState, s.RolloutStatus, perCluster, allLogs())
		}
		return ""
	})

	// Each replica carries its cluster's rolloutStatus: OCM's add-on replaces
	// the replica's status with its own type, which drops the field, and the
	// hub patches it back; the two do not chase each other.
	testkit.Eventually(t, hopTimeout, "hop \"replicas' rolloutStatus Succeeded under OCM's add-on\"", func() string {
		for _, cluster := range clusters {
			r := &policyv1.Policy{}
			if err := hubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "interop.p"}, r); err != nil {
				return err.Error()
			}
			if r.Status.RolloutStatus != policyv1.RolloutSucceeded {
				return fmt.Sprintf("replica in %s rolloutStatus %q", cluster, r.Status.RolloutStatus)
			}
		}
		return ""
	})
	before := rolloutStatusPatches(t)
	time.Sleep(2 * time.Second)
	if n := rolloutStatusPatches(t) - before; n > 4 {
		t.Errorf("the hub patched replicas' rolloutStatus %v times in 2 s once every rollout was done: it and OCM's add-on chase each other over status", n)
	}

	testkit.Eventually(t, hopTimeout, "hop \"dependency satisfied and ProgressivePerGroup rollout of q to completion\"", func() string {
		root := &policyv1.Policy{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: "interop", Name: "q"}, root); err != nil {
			return err.Error()
		}
		perCluster := map[string]string{}
		for _, e := range root.Status.Status {
			perCluster[e.ClusterName] = string(e.ComplianceState) + "/" + string(e.RolloutStatus)
		}
		want := map[string]string{"cluster1": "Compliant/Succeeded", "cluster2": "Compliant/Succeeded"}
		if root.Status.RolloutStatus != policyv1.RolloutSucceeded || fmt.Sprint(perCluster) != fmt.Sprint(want) {
			return fmt.Sprintf("q: rolloutStatus %q clusters %v\n%s", root.Status.RolloutStatus, perCluster, allLogs())
		}
		for _, s := range spokes {
			if err := s.plane.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "q-enforced"}, &corev1.ConfigMap{}); err != nil {
				return fmt.Sprintf("%s: %v", s.name, err)
			}
		}
		return ""
	})

	// Selective enforcement: s informs everywhere but a binding with
	// bindingOverrides and subFilter restricted enforces it on cluster1 only;
	// s2 the same with fleetpolicy's own spelling, which only fleetpolicy's hub reads
	// (OCM's add-on sees the resolved replicas either way).
	checkSelectiveEnforcement(t, hubClient, managed[0], managed[1], a, "s", ocmOverride)
	checkSelectiveEnforcement(t, hubClient, managed[0], managed[1], a, "s2",
		"remediationActionOverride: {remediationAction: enforce, subFilter: true}")

	// A PolicySet: its policy reaches both clusters through the set's binding,
	// and a dependency on the set gates qs until the set is Compliant.
	applyPolicySet(t, hubClient, "set", "inset", clusters)
	applyPolicy(t, hubClient, "inset", "enforce", "", " []")
	applyPolicy(t, hubClient, "qs", "enforce", "",
		"\n  - {apiVersion: policy.open-cluster-management.io/v1beta1, kind: PolicySet, name: set, compliance: Compliant}", clusters)
	for _, m := range managed {
		checkPolicyReaches(t, hubClient, m, a, "inset")
		checkPolicyReaches(t, hubClient, m, a, "qs")
	}
	testkit.Eventually(t, hopTimeout, "hop \"PolicySet status (fleetpolicy hub: Compliant once its policy is, from OCM add-on reports)\"", func() string {
		set := &policyv1beta1.PolicySet{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: "interop", Name: "set"}, set); err != nil {
			return err.Error()
		}
		if set.Status.Compliant != policyv1.Compliant {
			return fmt.Sprintf("set status %+v\n%s", set.Status, allLogs())
		}
		return ""
	})

	// cluster2 leaves the placement: its replica goes, and its add-on removes the
	// managed cluster's Policy; cluster1 keeps both.
	checkClusterLeavesPlacement(t, hubClient, managed[1], managed[:1], a)
	checkRootDeletion(t, hubClient, managed, a)
}

// applyPlacement applies, in namespace interop, a Placement name whose decision
// groups are groups (PlacementDecisions <name>-decision-<index>, labelled as
// OCM's placement controller labels them).
func applyPlacement(t *testing.T, c client.Client, name string, groups ...[]string) {
	t.Helper()
	var doc strings.Builder
	for i, g := range groups {
		fmt.Fprintf(&doc, `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: %[1]s-decision-%[2]d
  namespace: interop
  labels: {%[3]s: %[1]s, %[4]s: "%[2]d", %[5]s: group-%[2]d}
status:
  decisions:
`, name, i, clusterv1beta1.PlacementLabel, clusterv1beta1.DecisionGroupIndexLabel, clusterv1beta1.DecisionGroupNameLabel)
		for _, cluster := range g {
			fmt.Fprintf(&doc, "  - {clusterName: %s, reason: \"\"}\n", cluster)
		}
		doc.WriteString("---\n")
	}
	fmt.Fprintf(&doc, `
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: %s, namespace: interop}
spec: {}
`, name)
	testkit.Apply(t, c, doc.String())
}

// applyPolicy applies, in namespace interop, a Policy name with the
// remediationAction (action), rolloutStrategy (none when "") and dependencies
// given (YAML flow), whose one ConfigurationPolicy <name>-template makes ConfigMap
// default/<name>-enforced, bound to a Placement <name> (applyPlacement) whose
// decision groups are groups.
func applyPolicy(t *testing.T, c client.Client, name, action, strategy, dependencies string, groups ...[]string) {
	t.Helper()
	applyBoundPolicy(t, c, name, fmt.Sprintf(`
  remediationAction: %[4]s%[2]s
  dependencies:%[3]s
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %[1]s-template}
      spec:
        remediationAction: inform
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: %[1]s-enforced, namespace: default}
            data: {k: v}
`, name, strategyField(strategy), dependencies, action), groups...)
}

// applyBoundPolicy applies, in namespace interop, a Policy name whose spec is
// spec (YAML lines indented by two, after "disabled: false"), bound to a
// Placement <name> (applyPlacement) whose decision groups are groups.
func applyBoundPolicy(t *testing.T, c client.Client, name, spec string, groups ...[]string) {
	t.Helper()
	applyPlacement(t, c, name, groups...)
	doc := fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: %[1]s, namespace: interop}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: %[1]s}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: %[1]s}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %[1]s, namespace: interop}
spec:
  disabled: false%[2]s`, name, spec)
	testkit.Apply(t, c, doc)
}

// strategyField is the rolloutStrategy line of a Policy spec, none for "".
func strategyField(strategy string) string {
	if strategy == "" {
		return ""
	}
	return "\n  rolloutStrategy: " + strategy
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// rolloutStatusPatches is the in-process hub's count of replica rolloutStatus
// patches so far (fleetpolicy_hub_replica_writes_total{verb="rolloutStatus"}).
func rolloutStatusPatches(t *testing.T) float64 {
	t.Helper()
	return testkit.CounterSum(t, "fleetpolicy_hub_replica_writes_total", map[string]string{"verb": "rolloutStatus"})
}
