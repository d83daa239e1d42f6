package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// refusedNS is the namespace of TestReplicaWritesRefused's roots; the test's
// admission policy refuses their replicas in cluster-b.
const refusedNS = "write-refused"

// refuseReplicasYAML is a ValidatingAdmissionPolicy, and its binding, that
// refuses (Forbidden) every Policy in cluster-b whose name starts with
// refusedNS + ".": the replicas of refusedNS's roots there.
const refuseReplicasYAML = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: write-refused-test}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [policy.open-cluster-management.io]
      apiVersions: ["*"]
      operations: [CREATE, UPDATE]
      resources: [policies]
  validations:
  - expression: "!(object.metadata.namespace == 'cluster-b' && object.metadata.name.startsWith('` + refusedNS + `.'))"
    message: no write-refused replica in cluster-b (test admission policy)
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: write-refused-test}
spec:
  policyName: write-refused-test
  validationActions: [Deny]
`

// TestReplicaWritesRefused has the real API server refuse replicas and checks
// that the root says so in its ReplicasFailed condition, naming each cluster
// with the write and the API server's reason and message, while the other
// clusters get their replicas; that the condition holds still while the
// refusals do (no status write per retry); and that it names a cluster no
// more once its replica is written, and is removed with the last refusal.
// Refused: the replica in cluster-b, by a ValidatingAdmissionPolicy
// (Forbidden); the replica in cluster-d, whose name a Policy the hub did not
// write holds (AlreadyExists). A root with hub templates whose resolved
// replica is refused is not HubTemplatesResolved=True either.
func TestReplicaWritesRefused(t *testing.T) {
	ctx := context.Background()
	testkit.Apply(t, c, refuseReplicasYAML)
	t.Cleanup(func() {
		_ = c.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "write-refused-test"}})
		_ = c.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "write-refused-test"}})
	})
	// The API server loads the admission policy asynchronously: wait until it
	// refuses.
	probe := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-b", Name: refusedNS + ".probe"},
		Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	testkit.Eventually(t, 30*time.Second, "the admission policy to take effect", func() string {
		if err := c.Create(ctx, probe.DeepCopy()); err == nil {
			_ = c.Delete(ctx, probe)
			return "the probe was stored"
		}
		return ""
	})
	// A Policy of the replica's name in cluster-d that is no replica.
	squatter := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-d", Name: replication.Name(refusedNS, "root")},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Enforce, PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	if err := c.Create(ctx, squatter); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, squatter) })

	bound := []string{"cluster-a", "cluster-b", "cluster-c", "cluster-d"}
	testkit.Apply(t, c, policyYAML(refusedNS, "root", "inform")+"\n---"+ruleYAML(refusedNS, "root", bound...)+
		"\n---"+bindingYAML(refusedNS, "root", "root", "root", ""))
	testkit.Apply(t, c, templatedPolicyYAML(refusedNS, "tpl", "", "", "{{hub .ManagedClusterName hub}}", "cluster-a", "cluster-b"))

	expectReplicasIn(t, "root", "cluster-a", "cluster-c")
	expectReplicasIn(t, "tpl", "cluster-a")
	forbidden := "cluster-b (create, Forbidden): " + `policies.policy.open-cluster-management.io "write-refused.root" is forbidden: ` +
		"ValidatingAdmissionPolicy 'write-refused-test' with binding 'write-refused-test' denied request: " +
		"no write-refused replica in cluster-b (test admission policy)"
	taken := "cluster-d (create, AlreadyExists): " + `policies.policy.open-cluster-management.io "write-refused.root" already exists: ` +
		"that Policy is not a replica of write-refused/root"
	failed := expectRootCondition(t, "root", hub.ConditionReplicasFailed, metav1.ConditionTrue, "MultipleReasons",
		"the API server did not take the replica of 2 of 4 cluster(s): ", forbidden+"; ", taken)
	expectRootCondition(t, "tpl", hub.ConditionReplicasFailed, metav1.ConditionTrue, "Forbidden",
		"the API server did not take the replica of 1 of 2 cluster(s): cluster-b (create, Forbidden): ")
	expectRootCondition(t, "tpl", hub.ConditionHubTemplatesResolved, metav1.ConditionFalse, "ReplicaNotWritten",
		"hub templates resolved for all 2 cluster(s), but the API server did not take the resolved replica of 1 cluster(s)",
		"(see ReplicasFailed): cluster-b")

	t.Run("the condition holds still while the writes are refused", func(t *testing.T) {
		// The root is retried (with the controller's backoff), and each
		// retry is refused again: its status is not written again.
		root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: refusedNS, Name: "root"}}
		// First the status settles: the replicas just written reach it.
		testkit.Eventually(t, 30*time.Second, "the root's status to settle", func() string {
			get(t, root)
			was := root.ResourceVersion
			time.Sleep(time.Second)
			if get(t, root); root.ResourceVersion != was {
				return "the root changed within a second"
			}
			return ""
		})
		time.Sleep(5 * time.Second)
		again := root.DeepCopy()
		get(t, again)
		if again.ResourceVersion != root.ResourceVersion {
			t.Errorf("the root was written again while nothing changed: %+v, then %+v", root.Status.Conditions, again.Status.Conditions)
		}
		if now := meta.FindStatusCondition(again.Status.Conditions, hub.ConditionReplicasFailed); now == nil || *now != *failed {
			t.Errorf("ReplicasFailed changed: %+v, then %+v", failed, now)
		}
	})

	t.Run("a cluster whose replica is written is named no more", func(t *testing.T) {
		if err := c.Delete(ctx, squatter); err != nil {
			t.Fatal(err)
		}
		expectReplicasIn(t, "root", "cluster-a", "cluster-c", "cluster-d")
		expectRootCondition(t, "root", hub.ConditionReplicasFailed, metav1.ConditionTrue, "Forbidden",
			"the API server did not take the replica of 1 of 4 cluster(s): "+forbidden)
	})

	t.Run("the condition is removed with the last refusal", func(t *testing.T) {
		if err := c.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "write-refused-test"}}); err != nil {
			t.Fatal(err)
		}
		expectReplicasIn(t, "root", bound...)
		expectReplicasIn(t, "tpl", "cluster-a", "cluster-b")
		for _, name := range []string{"root", "tpl"} {
			testkit.Eventually(t, 60*time.Second, name+"'s ReplicasFailed removed", func() string {
				if cond := meta.FindStatusCondition(testkit.RootStatus(t, c, refusedNS, name).Conditions, hub.ConditionReplicasFailed); cond != nil {
					return fmt.Sprintf("still %+v", *cond)
				}
				return ""
			})
		}
		expectRootCondition(t, "tpl", hub.ConditionHubTemplatesResolved, metav1.ConditionTrue, "Resolved",
			"hub templates resolved for all 2 cluster(s)")
	})
}

// expectReplicasIn waits until exactly clusters hold a replica of root
// refusedNS/name (a Policy of the replica's name that carries the root-policy
// label naming the root).
func expectReplicasIn(t *testing.T, name string, clusters ...string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("replicas of %s/%s", refusedNS, name), func() string {
		list := &policyv1.PolicyList{}
		if err := c.List(context.Background(), list, client.MatchingLabels{replication.LabelRootPolicy: replication.Name(refusedNS, name)}); err != nil {
			return err.Error()
		}
		var got []string
		for _, p := range list.Items {
			got = append(got, p.Namespace)
		}
		slices.Sort(got)
		if !slices.Equal(got, clusters) {
			root := &policyv1.Policy{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: refusedNS, Name: name}, root); err != nil && !apierrors.IsNotFound(err) {
				return err.Error()
			}
			return fmt.Sprintf("replicas in %v, want %v (root conditions %+v)", got, clusters, root.Status.Conditions)
		}
		return ""
	})
}

// expectRootCondition waits until root refusedNS/name has the condition of type
// with status and reason, its message starting with prefix and holding each of
// parts, of the root's generation, and returns it.
func expectRootCondition(t *testing.T, name, conditionType string, status metav1.ConditionStatus, reason, prefix string, parts ...string) *metav1.Condition {
	t.Helper()
	var found metav1.Condition
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("%s/%s condition %s", refusedNS, name, conditionType), func() string {
		root := &policyv1.Policy{}
		get(t, func() client.Object { root.Namespace, root.Name = refusedNS, name; return root }())
		cond := meta.FindStatusCondition(root.Status.Conditions, conditionType)
		switch {
		case cond == nil:
			return fmt.Sprintf("none in %+v", root.Status.Conditions)
		case cond.Status != status || cond.Reason != reason || cond.ObservedGeneration != root.Generation:
			return fmt.Sprintf("%+v, want status %s, reason %s, generation %d", *cond, status, reason, root.Generation)
		case !strings.HasPrefix(cond.Message, prefix):
			return fmt.Sprintf("message %q, want it to start with %q", cond.Message, prefix)
		}
		for _, part := range parts {
			if !strings.Contains(cond.Message, part) {
				return fmt.Sprintf("message %q does not say %q", cond.Message, part)
			}
		}
		found = *cond
		return ""
	})
	return &found
}
