package interoptest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// fleetpolicySpoke is one managed cluster running fleetpolicy's spoke
// (bin/fleetpolicy-spoke, `make build`) as a process.
type fleetpolicySpoke struct {
	name  string
	plane *localplane.Plane
	spoke *localplane.Process
}

func (s *fleetpolicySpoke) logs() string {
	return fmt.Sprintf("--- %s fleetpolicy-spoke:\n%s", s.name, s.spoke.LogTail(15))
}

// droppedObservedGeneration counts the hub's warnings, in the spoke's log,
// that it dropped a status.observedGeneration the spoke wrote.
func (s *fleetpolicySpoke) droppedObservedGeneration() int {
	return strings.Count(s.spoke.Log(), `unknown field \"status.observedGeneration\"`)
}

func (s *fleetpolicySpoke) managed() managedCluster {
	return managedCluster{name: s.name, client: s.plane.Client, logs: s.logs}
}

// startFleetpolicySpoke registers cluster on the hub, gives it the hub
// identity of manifests/spoke/hub and starts fleetpolicy's spoke for it
// against plane (whose CRDs are fleetpolicy's).
func startFleetpolicySpoke(t *testing.T, hubPlane, plane *localplane.Plane, cluster string) *fleetpolicySpoke {
	t.Helper()
	hubKubeconfig := hubIdentity(t, hubPlane, cluster)
	args := append([]string{"--hub-kubeconfig=" + hubKubeconfig, "--cluster-name=" + cluster}, listenerFlags(t)...)
	proc, err := localplane.StartProcess("fleetpolicy-spoke", "build", args, []string{"KUBECONFIG=" + plane.KubeconfigPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	return &fleetpolicySpoke{name: cluster, plane: plane, spoke: proc}
}

// startOCMPropagator starts OCM's governance-policy-propagator against the
// hub as a hub component (admin kubeconfig), watching every namespace
// (WATCH_NAMESPACE empty), without leader election and without its
// validating webhook (no webhook server is reachable from a local plane).
func startOCMPropagator(t *testing.T, hubPlane *localplane.Plane) *localplane.Process {
	t.Helper()
	args := append([]string{"--leader-elect=false", "--enable-webhooks=false"}, listenerFlags(t)...)
	proc, err := localplane.StartProcess("ocm-propagator", "ocm-policy-binaries", args,
		[]string{"KUBECONFIG=" + hubPlane.KubeconfigPath, "WATCH_NAMESPACE="})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Stop)
	return proc
}

// TestOCMPropagatorWithFleetpolicySpoke is direction 2: OCM's propagator
// v0.19.0 on a hub with OCM's policy CRDs, fleetpolicy's spoke on two managed
// clusters with the hub identity of manifests/spoke/hub. Every subtest
// shares the hub and the spokes; each hop names the component that makes it.
func TestOCMPropagatorWithFleetpolicySpoke(t *testing.T) {
	began := time.Now()
	ctx := context.Background()
	fleet := testkit.StartFleet(t, 2)
	hubClient := fleet.Hub.Client
	installOCMCRDs(t, fleet.Hub)
	propagator := startOCMPropagator(t, fleet.Hub)
	clusters := []string{"cluster1", "cluster2"}
	spokes := make([]*fleetpolicySpoke, len(clusters))
	managed := make([]managedCluster, len(clusters))
	for i, cluster := range clusters {
		s := startFleetpolicySpoke(t, fleet.Hub, fleet.Spokes[i], cluster)
		m := s.managed()
		m.logs = func() string { return s.logs() + "\n--- propagator:\n" + propagator.LogTail(15) }
		spokes[i], managed[i] = s, m
	}
	// Real OLM on cluster1, for the OperatorPolicy; it starts while the
	// other subtests run.
	olmStarted := make(chan struct{})
	var olm *localplane.OLM
	var olmErr error
	go func() {
		defer close(olmStarted)
		olm, olmErr = localplane.StartOLM(ctx, fleet.Spokes[0])
	}()
	t.Cleanup(func() {
		if <-olmStarted; olmErr == nil {
			olm.Stop()
		}
	})
	a := agents{hub: "OCM propagator", spoke: "fleetpolicy spoke", evaluator: "fleetpolicy spoke"}
	t.Logf("hub, propagator and spokes started after %.1fs", time.Since(began).Seconds())

	// Every policy is applied at once, so that they progress together.
	applyPolicy(t, hubClient, "q", "enforce", "",
		"\n  - {apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: d, compliance: Compliant}", clusters)
	applyPolicy(t, hubClient, "p", "enforce", "", " []", clusters)
	applyPolicy(t, hubClient, "herr", "enforce", "", " []", clusters)
	applyPolicy(t, hubClient, "inset", "enforce", "", " []") // bound to no cluster but through its PolicySet
	applyPolicySet(t, hubClient, "set", "inset", clusters)
	applyPolicy(t, hubClient, "qs", "enforce", "",
		"\n  - {apiVersion: policy.open-cluster-management.io/v1beta1, kind: PolicySet, name: set, compliance: Compliant}", clusters)

	t.Run("propagation", func(t *testing.T) {
		for _, m := range managed {
			checkPolicyReaches(t, hubClient, m, a, "p")
		}
		checkRootStatus(t, hubClient, "p", a, managed, map[string]policyv1.ComplianceState{"cluster1": policyv1.Compliant, "cluster2": policyv1.Compliant})
	})

	// OCM's Policy CRD has no status.observedGeneration: the API server drops
	// it with a warning, which the spoke logs. Once it has seen it dropped,
	// the spoke no longer sends it (checked after every other subtest).
	dropped := make([]int, len(spokes))
	for i, s := range spokes {
		dropped[i] = s.droppedObservedGeneration()
	}

	t.Run("dependencies", func(t *testing.T) {
		for _, m := range managed {
			checkReplicaCompliance(t, hubClient, m, "q", policyv1.Pending,
				"dependency gating (fleetpolicy spoke: q Pending while d, named interop.d by the OCM propagator, is missing)")
		}
		// d exists but only informs: NonCompliant, so q stays Pending.
		applyPolicy(t, hubClient, "d", "inform", "", " []", clusters)
		for _, m := range managed {
			checkReplicaCompliance(t, hubClient, m, "d", policyv1.NonCompliant, "status sync (fleetpolicy spoke: d informs, NonCompliant)")
			checkReplicaCompliance(t, hubClient, m, "q", policyv1.Pending, "dependency gating (fleetpolicy spoke: q Pending while d is NonCompliant)")
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "q-enforced"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				t.Fatalf("hop \"dependency gating\" on %s: q was enforced while d is NonCompliant (ConfigMap: %v)", m.name, err)
			}
		}
		applyPolicy(t, hubClient, "d", "enforce", "", " []", clusters)
		for _, m := range managed {
			checkReplicaCompliance(t, hubClient, m, "q", policyv1.Compliant, "dependency satisfied (fleetpolicy spoke: q Compliant once d is)")
			hop(t, m, "enforcement after the dependency (fleetpolicy spoke creates q's ConfigMap)", func() string {
				return errString(m.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "q-enforced"}, &corev1.ConfigMap{}))
			})
		}
	})

	t.Run("spec change with a hub template", func(t *testing.T) {
		// The root's ConfigMap now carries hub templates the propagator
		// resolves per cluster: one value in the clear, one encrypted with
		// the cluster's policy-encryption-key, which the spoke copies with
		// its hub Role and decrypts.
		editConfigMapData(t, hubClient, "p", `"k":"{{hub .ManagedClusterName hub}}","protected":"{{hub \"s3cret\" | protect hub}}"`)
		for _, m := range managed {
			hop(t, m, "spec sync of a change (OCM propagator resolves the hub templates into the replica, encrypting one -> "+
				"fleetpolicy spoke updates, decrypts and enforces)", func() string {
				cm := &corev1.ConfigMap{}
				if err := m.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "p-enforced"}, cm); err != nil {
					return err.Error()
				}
				if cm.Data["k"] != m.name || cm.Data["protected"] != "s3cret" {
					return fmt.Sprintf("ConfigMap data %v, want k: %s, protected: s3cret; %s; %s", cm.Data, m.name, policyState(m, "p"), configPolicyState(m, "p-template"))
				}
				return ""
			})
		}
	})

	t.Run("hub template error", func(t *testing.T) {
		// A hub template the propagator cannot resolve: it marks the
		// replica's template with its hub-templates-error annotation, which
		// the spoke reports instead of creating the template.
		editConfigMapData(t, hubClient, "herr", `"k":"{{hub \"v\" | noSuchFunction hub}}"`)
		for _, m := range managed {
			hop(t, m, "hub template error (OCM propagator's hub-templates-error annotation -> fleetpolicy spoke reports it NonCompliant, removes the template)", func() string {
				r := &policyv1.Policy{}
				if err := hubClient.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "interop.herr"}, r); err != nil {
					return err.Error()
				}
				if r.Status.ComplianceState != policyv1.NonCompliant || len(r.Status.Details) == 0 || len(r.Status.Details[0].History) == 0 ||
					!strings.Contains(r.Status.Details[0].History[0].Message, "noSuchFunction") {
					return fmt.Sprintf("replica herr status %+v", r.Status)
				}
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(configPolicyKind)
				if err := m.client.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "herr-template"}, u); !apierrors.IsNotFound(err) {
					return fmt.Sprintf("ConfigurationPolicy herr-template still there (%v)", err)
				}
				return ""
			})
		}
	})

	t.Run("policy set", func(t *testing.T) {
		for _, m := range managed {
			checkPolicyReaches(t, hubClient, m, a, "inset")
		}
		// A dependency on the set reaches the spoke as one on each of its
		// policies, under the replica's name.
		for _, m := range managed {
			hop(t, m, "dependency on a PolicySet (OCM propagator names the set's policies -> fleetpolicy spoke gates on them)", func() string {
				r := &policyv1.Policy{}
				if err := hubClient.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "interop.qs"}, r); err != nil {
					return err.Error()
				}
				deps := r.Spec.Dependencies
				if len(deps) != 1 || deps[0].Kind != "Policy" || deps[0].Name != "interop.inset" || r.Status.ComplianceState != policyv1.Compliant {
					return fmt.Sprintf("replica qs dependencies %+v, status %+v", deps, r.Status)
				}
				return ""
			})
		}
		testkit.Eventually(t, hopTimeout, "hop \"PolicySet status (OCM propagator: set Compliant from its policy's replicas)\"", func() string {
			set := &v1beta1.PolicySet{}
			if err := hubClient.Get(ctx, client.ObjectKey{Namespace: "interop", Name: "set"}, set); err != nil {
				return err.Error()
			}
			if set.Status.Compliant != policyv1.Compliant {
				return fmt.Sprintf("PolicySet status %+v\n%s", set.Status, joinLogs(managed))
			}
			return ""
		})
	})

	t.Run("selective enforcement", func(t *testing.T) {
		checkSelectiveEnforcement(t, hubClient, managed[0], managed[1], a, "s", ocmOverride)
	})

	t.Run("operator policy with real OLM", func(t *testing.T) {
		if <-olmStarted; olmErr != nil {
			t.Fatalf("starting OLM on cluster1: %v", olmErr)
		}
		checkOperatorPolicy(t, hubClient, managed[0], a, olm)
	})

	t.Run("cluster leaves the placement", func(t *testing.T) {
		checkClusterLeavesPlacement(t, hubClient, managed[1], managed[:1], a)
		checkRootStatus(t, hubClient, "p", a, managed, map[string]policyv1.ComplianceState{"cluster1": policyv1.Compliant})
	})

	t.Run("root deletion", func(t *testing.T) {
		checkRootDeletion(t, hubClient, managed[:1], a)
	})

	t.Run("hub status sync sends only fields of OCM's Policy CRD", func(t *testing.T) {
		for i, s := range spokes {
			if n := s.droppedObservedGeneration(); n != dropped[i] {
				t.Errorf("hop \"status sync (fleetpolicy spoke: no status.observedGeneration to a hub that drops it)\" on %s: "+
					"%d more writes of it were dropped after the first were", s.name, n-dropped[i])
			}
		}
	})
	t.Logf("direction 2 took %.1fs", time.Since(began).Seconds())
}

// editConfigMapData replaces the data k: v of the ConfigMap that root
// interop/<policy> (applyPolicy) enforces with data, a JSON fragment.
func editConfigMapData(t *testing.T, hubClient client.Client, policy, data string) {
	t.Helper()
	root := &policyv1.Policy{}
	if err := hubClient.Get(context.Background(), client.ObjectKey{Namespace: "interop", Name: policy}, root); err != nil {
		t.Fatal(err)
	}
	def := &root.Spec.PolicyTemplates[0].ObjectDefinition
	edited := bytes.Replace(def.Raw, []byte(`"k":"v"`), []byte(data), 1)
	if bytes.Equal(edited, def.Raw) {
		t.Fatalf("policy %s: no data k: v in %s", policy, def.Raw)
	}
	def.Raw = edited
	if err := hubClient.Update(context.Background(), root); err != nil {
		t.Fatal(err)
	}
}

// configPolicyState is the annotations and status of ConfigurationPolicy
// name on m, for a failure message.
func configPolicyState(m managedCluster, name string) string {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configPolicyKind)
	if err := m.client.Get(context.Background(), client.ObjectKey{Namespace: m.name, Name: name}, u); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("ConfigurationPolicy %s annotations %v status %v", name, u.GetAnnotations(), u.Object["status"])
}

// policyState is the status of the managed cluster's copy of interop/<name>
// on m, for a failure message.
func policyState(m managedCluster, name string) string {
	p := &policyv1.Policy{}
	if err := m.client.Get(context.Background(), client.ObjectKey{Namespace: m.name, Name: "interop." + name}, p); err != nil {
		return err.Error()
	}
	var history []string
	for _, d := range p.Status.Details {
		for _, h := range d.History {
			history = append(history, h.Message)
		}
	}
	return fmt.Sprintf("Policy %s on %s: %s, history %q", name, m.name, p.Status.ComplianceState, history)
}

// checkRootStatus waits until the root interop/<policy> lists exactly the
// clusters of want with their compliance, and the aggregate of them.
func checkRootStatus(t *testing.T, hubClient client.Client, policy string, a agents, clusters []managedCluster, want map[string]policyv1.ComplianceState) {
	t.Helper()
	wantRoot := policyv1.Compliant
	for _, c := range want {
		if c != policyv1.Compliant {
			wantRoot = c
		}
	}
	what := fmt.Sprintf("hop \"status to the root (%s: replicas' compliance -> root %s)\"", a.hub, policy)
	testkit.Eventually(t, hopTimeout, what, func() string {
		root := &policyv1.Policy{}
		if err := hubClient.Get(context.Background(), client.ObjectKey{Namespace: "interop", Name: policy}, root); err != nil {
			return err.Error()
		}
		got := map[string]policyv1.ComplianceState{}
		for _, e := range root.Status.Status {
			got[e.ClusterName] = e.ComplianceState
		}
		if root.Status.ComplianceState != wantRoot || fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("root compliant %q clusters %v, want %q %v\n%s", root.Status.ComplianceState, got, wantRoot, want, joinLogs(clusters))
		}
		return ""
	})
}

// applyPolicySet applies PolicySet interop/<name> of policy, bound by a
// PlacementBinding to a Placement <name> that selects clusters.
func applyPolicySet(t *testing.T, c client.Client, name, policy string, clusters []string) {
	t.Helper()
	applyPlacement(t, c, name, clusters)
	testkit.Apply(t, c, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: %[1]s, namespace: interop}
spec: {policies: [%[2]s]}
---
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: %[1]s, namespace: interop}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: %[1]s}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: PolicySet, name: %[1]s}]
`, name, policy))
}

// checkOperatorPolicy delivers an OperatorPolicy like that of
// controllers/internal/olme2e/testdata/olm-catalog (tiny-operator v0.1.0 from
// that catalog) in policy op to m, where
// OLM runs, and checks each hop to Compliant on the root.
func checkOperatorPolicy(t *testing.T, hubClient client.Client, m managedCluster, a agents, olm *localplane.OLM) {
	t.Helper()
	ctx := context.Background()
	if err := localplane.EnsureNamespace(ctx, m.client, "tiny-system"); err != nil {
		t.Fatal(err)
	}
	applyPlacement(t, hubClient, "op", []string{m.name})
	testkit.Apply(t, hubClient, `
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: op, namespace: interop}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: op}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: op}]
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: op, namespace: interop}
spec:
  disabled: false
  remediationAction: enforce
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1beta1
      kind: OperatorPolicy
      metadata: {name: tiny-operator}
      spec:
        remediationAction: inform
        severity: medium
        subscription:
          name: tiny-operator
          namespace: tiny-system
          channel: stable
          source: fleetpolicy-examples
          sourceNamespace: olm
          startingCSV: tiny-operator.v0.1.0
        allowedCSVs: [tiny-operator.v0.1.0]
`)
	withOLM := m
	withOLM.logs = func() string { return m.logs() + "\n" + olm.LogTail(10) }
	hop(t, withOLM, fmt.Sprintf("template sync (%s: Policy -> OperatorPolicy)", a.spoke), func() string {
		return errString(m.client.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "tiny-operator"}, &v1beta1.OperatorPolicy{}))
	})
	hop(t, withOLM, "operator install (fleetpolicy spoke's OperatorPolicy through real OLM: CSV tiny-operator.v0.1.0 Succeeded, policy Compliant)", func() string {
		csv := &operatorsv1alpha1.ClusterServiceVersion{}
		if err := m.client.Get(ctx, client.ObjectKey{Namespace: "tiny-system", Name: "tiny-operator.v0.1.0"}, csv); err != nil {
			return err.Error()
		}
		op := &v1beta1.OperatorPolicy{}
		if err := m.client.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "tiny-operator"}, op); err != nil {
			return err.Error()
		}
		if csv.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded || op.Status.ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("CSV phase %q; OperatorPolicy %q %+v", csv.Status.Phase, op.Status.ComplianceState, op.Status.Conditions)
		}
		return ""
	})
	checkReplicaCompliance(t, hubClient, withOLM, "op", policyv1.Compliant, fmt.Sprintf("status sync (%s: OperatorPolicy compliance -> hub replica)", a.spoke))
	checkRootStatus(t, hubClient, "op", a, []managedCluster{withOLM}, map[string]policyv1.ComplianceState{m.name: policyv1.Compliant})
}
