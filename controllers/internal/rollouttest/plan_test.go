package rollouttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// planRolloutGolden is the plan-rollout golden case whose PlacementDecisions
// and PlacementRule are written as by hand: without the decision-group-index
// label, with empty clusterNames, a group over two PlacementDecisions.
const planRolloutGolden = "functions/plan-rollout/testdata/decisions-as-the-hub-reads-them/expected.yaml"

// TestHubReadsDecisionsAsPlanRollout applies the input of a plan-rollout
// golden case and the RolloutPlan plan-rollout wrote for it (its golden
// output, without local-config, as a user applies it) to the hub. The hub's
// live waves follow the plan (RolloutPlanMatches is True, not Diverged) and
// the rollout enforces wave by wave as planned: the hub and plan-rollout read
// the same PlacementDecisions into the same decision groups.
func TestHubReadsDecisionsAsPlanRollout(t *testing.T) {
	root := testkit.RepoRoot(t)
	out, err := os.ReadFile(filepath.Join(root, planRolloutGolden))
	if err != nil {
		t.Fatal(err)
	}
	var rl struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(out, &rl); err != nil {
		t.Fatal(err)
	}
	// The Policy last: bound before its decisions exist, its rollout would
	// start over fewer groups.
	var docs []string
	var policy, plan string
	for _, item := range rl.Items {
		if item["kind"] == fleetv1alpha1.RolloutPlanKind {
			meta, _ := item["metadata"].(map[string]any)
			annotations, _ := meta["annotations"].(map[string]any)
			delete(annotations, "config.kubernetes.io/local-config")
		}
		doc, err := yaml.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		switch item["kind"] {
		case "Policy":
			policy = string(doc)
		case fleetv1alpha1.RolloutPlanKind:
			plan = string(doc)
		default:
			docs = append(docs, string(doc))
		}
	}
	if policy == "" || plan == "" {
		t.Fatalf("%s holds no Policy or no RolloutPlan", planRolloutGolden)
	}
	planned := &fleetv1alpha1.RolloutPlan{}
	if err := yaml.Unmarshal([]byte(plan), planned); err != nil {
		t.Fatal(err)
	}
	ns := planned.Namespace

	// The PlacementRule's decisions are the input's, as OCM's PlacementRule
	// controller wrote them: the hub does not schedule PlacementRules itself,
	// as beside OCM's add-on.
	hubtest.Start(t, plane.Config, func(o *hub.ManagerOptions) { o.SchedulePlacementRules = false })
	f := spoke(t, ns, 100*time.Millisecond)
	testkit.Apply(t, c, strings.Join(append(docs, plan, policy), "---\n"))

	testkit.Eventually(t, 30*time.Second, "the live waves follow the plan", func() string {
		for _, c := range testkit.RootStatus(t, c, ns, "p").Conditions {
			if c.Type == hub.ConditionRolloutPlanMatches && c.Status == "True" {
				return ""
			}
			if c.Type == hub.ConditionRolloutPlanMatches || c.Type == hub.ConditionInvalid {
				return c.Type + " " + string(c.Status) + ": " + c.Message
			}
		}
		return "no " + hub.ConditionRolloutPlanMatches + " condition"
	})
	var waves [][]string
	for _, w := range planned.Spec.Waves {
		waves = append(waves, w.Clusters)
	}
	waitRollout(t, ns, len(planned.Spec.Clusters), policyv1.RolloutSucceeded)
	assertWaves(t, f.enforcedOrder(), waves...)
	assertEnforcedOnce(t, f)
}
