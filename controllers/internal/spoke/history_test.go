package spoke_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestEnforceHistoryAsOCM: an enforce policy whose ConfigMap is missing
// reports, as OCM's config-policy-controller and framework add-on do, first
// that the object was not found (NonCompliant), then that it was created
// (Compliant), in the hub replica's history. The evaluation the ConfigMap's
// watch sends back for the policy's own create finds the ConfigMap as it was
// written and says nothing new (OCM's controller adds "found as
// specified"). The hub holds the newest entry as an Event. When the
// ConfigMap is deleted, the policy creates it again and says so the same way.
func TestEnforceHistoryAsOCM(t *testing.T) {
	const ns, data = "history", "history-data"
	if err := localplane.EnsureNamespace(t.Context(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, strings.Replace(policyOf(ns, "h", configPolicy("h-cm", "enforce", "musthave", data, "made"), ""),
		"disabled: false", "disabled: false\n  remediationAction: enforce", 1))
	bindToCluster(t, ns, "h")
	notFound := "NonCompliant; violation - configmaps [made] not found in namespace " + data
	created := "Compliant; notification - configmaps [made] was created successfully in namespace " + data
	expectHubHistory(t, ns, "h", created, notFound)

	// The policy's own create comes back through the ConfigMap's watch: the
	// history stays as it is.
	time.Sleep(3 * time.Second)
	expectHubHistory(t, ns, "h", created, notFound)
	replica := hubReplica(t, ns, "h")
	events := &corev1.EventList{}
	if err := hubC.List(t.Context(), events, client.InNamespace(cluster)); err != nil {
		t.Fatal(err)
	}
	newest := replica.Status.Details[0].History[0].EventName
	if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool { return e.Name == newest && e.Message == created }) {
		t.Errorf("the newest history entry %s is not an Event on the hub", newest)
	}

	deleteConfigMap(t, data, "made")
	expectHubHistory(t, ns, "h", created, notFound, created, notFound)
}

// expectHubHistory waits until the history of the hub replica of ns/name
// holds exactly the messages want, newest first, for its current generation.
func expectHubHistory(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, fmt.Sprintf("the hub replica's history %q", want), func() string {
		r := hubReplica(t, ns, name)
		if r == nil {
			return "no replica"
		}
		if r.Status.ObservedGeneration != r.Generation || len(r.Status.Details) != 1 {
			return fmt.Sprintf("status %+v", r.Status)
		}
		var got []string
		for _, h := range r.Status.Details[0].History {
			got = append(got, h.Message)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("history %q", got)
		}
		if r.Status.ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("compliance %q", r.Status.ComplianceState)
		}
		return ""
	})
}
