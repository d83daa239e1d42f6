package interoptest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// The hops both directions share: a policy of namespace interop (applyPolicy)
// reaching a managed cluster, selective enforcement, a cluster leaving the
// placement and root deletion. Each failure message names the hop and the
// component that makes it (agents).

// managedCluster is the view the hops take of one managed cluster's API
// server, whichever agents run there.
type managedCluster struct {
	name   string
	client client.Client
	// logs is the tail of its agents' logs, for a failure message.
	logs func() string
}

// agents name the components of a direction in the hops' failure messages.
type agents struct {
	// hub replicates roots (fleetpolicy's hub, OCM's propagator).
	hub string
	// spoke syncs and reports them on a managed cluster (OCM's add-on,
	// fleetpolicy's spoke).
	spoke string
	// evaluator evaluates and enforces ConfigurationPolicies.
	evaluator string
}

var configPolicyKind = schema.GroupVersionKind{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "ConfigurationPolicy"}

// hop waits until check passes on m, failing with the hop's name, the
// cluster's and its agents' logs.
func hop(t *testing.T, m managedCluster, name string, check func() string) {
	t.Helper()
	testkit.Eventually(t, hopTimeout, fmt.Sprintf("hop %q on %s", name, m.name), func() string {
		if msg := check(); msg != "" {
			return msg + "\n" + m.logs()
		}
		return ""
	})
}

// checkPolicyReaches checks that enforce policy interop/<policy>
// (applyPolicy) reaches m hop by hop: its replica on the hub, the managed
// cluster's copy, the ConfigurationPolicy <policy>-template, the enforced
// ConfigMap default/<policy>-enforced, and Compliant with its history on the
// hub replica.
func checkPolicyReaches(t *testing.T, hubClient client.Client, m managedCluster, a agents, policy string) {
	t.Helper()
	ctx := context.Background()
	replica := client.ObjectKey{Namespace: m.name, Name: "interop." + policy}
	hop(t, m, fmt.Sprintf("replication (%s: root -> replica on the hub)", a.hub), func() string {
		return errString(hubClient.Get(ctx, replica, &policyv1.Policy{}))
	})
	hop(t, m, fmt.Sprintf("spec sync (%s: replica -> managed cluster Policy)", a.spoke), func() string {
		return errString(m.client.Get(ctx, replica, &policyv1.Policy{}))
	})
	hop(t, m, fmt.Sprintf("template sync (%s: Policy -> ConfigurationPolicy)", a.spoke), func() string {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(configPolicyKind)
		return errString(m.client.Get(ctx, client.ObjectKey{Namespace: m.name, Name: policy + "-template"}, u))
	})
	hop(t, m, fmt.Sprintf("enforcement (%s creates the ConfigMap)", a.evaluator), func() string {
		return errString(m.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: policy + "-enforced"}, &corev1.ConfigMap{}))
	})
	hop(t, m, fmt.Sprintf("status sync (%s: compliance -> hub replica)", a.spoke), func() string {
		r := &policyv1.Policy{}
		if err := hubClient.Get(ctx, replica, r); err != nil {
			return err.Error()
		}
		if r.Status.ComplianceState != policyv1.Compliant || len(r.Status.Details) == 0 || len(r.Status.Details[0].History) == 0 {
			return fmt.Sprintf("replica status %+v", r.Status)
		}
		return ""
	})
}

// checkReplicaCompliance waits until the hub replica of interop/<policy> on
// m reports want, failing with the hop's name.
func checkReplicaCompliance(t *testing.T, hubClient client.Client, m managedCluster, policy string, want policyv1.ComplianceState, hopName string) {
	t.Helper()
	hop(t, m, hopName, func() string {
		r := &policyv1.Policy{}
		if err := hubClient.Get(context.Background(), client.ObjectKey{Namespace: m.name, Name: "interop." + policy}, r); err != nil {
			return err.Error()
		}
		if r.Status.ComplianceState != want {
			return fmt.Sprintf("replica %s status %+v, want %s", policy, r.Status, want)
		}
		return ""
	})
}

// checkSelectiveEnforcement applies inform policy on both clusters and a
// second PlacementBinding of it, carrying override (YAML lines: the override
// and its sub-filter, in OCM's or fleetpolicy's spelling), whose Placement
// selects enforced only, and checks that policy is enforced there and only
// informs (NonCompliant) on informed.
func checkSelectiveEnforcement(t *testing.T, hubClient client.Client, enforced, informed managedCluster, a agents, policy, override string) {
	t.Helper()
	ctx := context.Background()
	applyPolicy(t, hubClient, policy, "inform", "", " []", []string{enforced.name, informed.name})
	applyPlacement(t, hubClient, policy+"-enforce", []string{enforced.name})
	testkit.Apply(t, hubClient, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: %[1]s-override, namespace: interop}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: %[1]s-enforce}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: %[1]s}]
%[2]s
`, policy, override))
	what := fmt.Sprintf("hop \"selective enforcement (%s: %s: enforced on %s, informed on %s)\"", a.hub,
		strings.ReplaceAll(override, "\n", " "), enforced.name, informed.name)
	enforcedConfigMap := client.ObjectKey{Namespace: "default", Name: policy + "-enforced"}
	testkit.Eventually(t, hopTimeout, what, func() string {
		made := enforced.client.Get(ctx, enforcedConfigMap, &corev1.ConfigMap{})
		replica := &policyv1.Policy{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: informed.name, Name: "interop." + policy}, replica); err != nil {
			return err.Error()
		}
		if made != nil || replica.Status.ComplianceState != policyv1.NonCompliant {
			return fmt.Sprintf("%s ConfigMap: %v; %s replica %s %+v\n%s\n%s", enforced.name, made, informed.name,
				replica.Spec.RemediationAction, replica.Status, enforced.logs(), informed.logs())
		}
		return ""
	})
	if err := informed.client.Get(ctx, enforcedConfigMap, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("%s: %s was enforced (ConfigMap: %v)", what, informed.name, err)
	}
}

// ocmOverride is OCM's spelling of an enforce override narrowed to the
// clusters other bindings place the policy on.
const ocmOverride = "bindingOverrides: {remediationAction: Enforce}\nsubFilter: restricted"

// checkClusterLeavesPlacement takes leaving out of the decisions of policy
// p's Placement (applyPolicy, one decision group) and checks that its replica
// and its managed cluster's Policy go while each cluster of kept keeps its own.
func checkClusterLeavesPlacement(t *testing.T, hubClient client.Client, leaving managedCluster, kept []managedCluster, a agents) {
	t.Helper()
	ctx := context.Background()
	decision := &clusterv1beta1.PlacementDecision{}
	if err := hubClient.Get(ctx, client.ObjectKey{Namespace: "interop", Name: "p-decision-0"}, decision); err != nil {
		t.Fatal(err)
	}
	var decisions []clusterv1beta1.ClusterDecision
	for _, d := range decision.Status.Decisions {
		if d.ClusterName != leaving.name {
			decisions = append(decisions, d)
		}
	}
	decision.Status.Decisions = decisions
	if err := hubClient.Status().Update(ctx, decision); err != nil {
		t.Fatal(err)
	}
	what := fmt.Sprintf("hop \"cluster removed from the placement (%s removes its replica, %s its managed Policy)\"", a.hub, a.spoke)
	testkit.Eventually(t, hopTimeout, what, func() string {
		hubErr := hubClient.Get(ctx, client.ObjectKey{Namespace: leaving.name, Name: "interop.p"}, &policyv1.Policy{})
		managedErr := leaving.client.Get(ctx, client.ObjectKey{Namespace: leaving.name, Name: "interop.p"}, &policyv1.Policy{})
		if !apierrors.IsNotFound(hubErr) || !apierrors.IsNotFound(managedErr) {
			return fmt.Sprintf("%s replica: %v; managed Policy: %v\n%s", leaving.name, hubErr, managedErr, leaving.logs())
		}
		for _, m := range kept {
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "interop.p"}, &policyv1.Policy{}); err != nil {
				return fmt.Sprintf("%s lost its Policy: %v", m.name, err)
			}
		}
		return ""
	})
}

// checkRootDeletion deletes root policy interop/p and checks that its
// replicas and the managed clusters' Policies go.
func checkRootDeletion(t *testing.T, hubClient client.Client, clusters []managedCluster, a agents) {
	t.Helper()
	ctx := context.Background()
	root := &policyv1.Policy{}
	root.Namespace, root.Name = "interop", "p"
	if err := hubClient.Delete(ctx, root); err != nil {
		t.Fatal(err)
	}
	for _, m := range clusters {
		hop(t, m, fmt.Sprintf("root deletion (%s removes the replica, %s the managed Policy)", a.hub, a.spoke), func() string {
			hubErr := hubClient.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "interop.p"}, &policyv1.Policy{})
			managedErr := m.client.Get(ctx, client.ObjectKey{Namespace: m.name, Name: "interop.p"}, &policyv1.Policy{})
			if !apierrors.IsNotFound(hubErr) || !apierrors.IsNotFound(managedErr) {
				return fmt.Sprintf("hub replica: %v; managed Policy: %v", hubErr, managedErr)
			}
			return ""
		})
	}
}

// joinLogs is the logs of every cluster, for a failure message that concerns
// them all.
func joinLogs(clusters []managedCluster) string {
	var out []string
	for _, m := range clusters {
		out = append(out, m.logs())
	}
	return strings.Join(out, "\n")
}
