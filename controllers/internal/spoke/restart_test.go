package spoke_test

import (
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestRestartResumes stops the spoke controller, changes the world while it is
// down — a dependency turns NonCompliant on the managed cluster, a dependent
// policy gets a new template on the hub — and starts a new one: it resumes from
// what the API servers hold.
func TestRestartResumes(t *testing.T) {
	const ns, data = "restart", "restart-data"
	configMap(t, data, "r1")
	configMap(t, data, "r2")
	testkit.Apply(t, hubC, policyOf(ns, "r1", configPolicy("r1-cm", "inform", "musthave", data, "r1"), "")+"---"+
		policyOf(ns, "r2", configPolicy("r2-cm", "inform", "musthave", data, "r2"), dependsOn("r1", policyv1.Compliant)))
	bindToCluster(t, ns, "r1", "r2")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"r1": policyv1.Compliant, "r2": policyv1.Compliant})

	stopSpoke()
	restarted := false
	defer func() {
		if !restarted {
			if err := startSpoke(); err != nil {
				t.Error(err)
			}
		}
	}()
	deleteConfigMap(t, data, "r1")
	configMap(t, data, "r2-new")
	testkit.Apply(t, hubC, policyOf(ns, "r2", configPolicy("r2-cm", "inform", "musthave", data, "r2-new"), dependsOn("r1", policyv1.Compliant)))
	restarted = true
	if err := startSpoke(); err != nil {
		t.Fatal(err)
	}

	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"r1": policyv1.NonCompliant, "r2": policyv1.Pending})
	testkit.Eventually(t, 45*time.Second, "r2's template removed while r1 is NonCompliant", func() string {
		if spokeConfigPolicy(t, "r2-cm") != nil {
			return "r2-cm still exists"
		}
		return ""
	})
	configMap(t, data, "r1")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"r1": policyv1.Compliant, "r2": policyv1.Compliant})
	expectCurrentOnHub(t, ns, "r2", "configmaps [r2-new] found as specified")
}
