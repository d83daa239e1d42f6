//go:build linux

package olme2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	sharedop "github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// enableEnv turns TestRealOLM on.
const enableEnv = "FLEETPOLICY_E2E_OLM"

// TestRealOLM installs tiny-operator from the example catalog with the real
// OLM through the enforcing OperatorPolicy of testdata/olm-catalog until it is
// Compliant (OperatorPolicy user story 1), then checks that the upgrade OLM
// offers waits for allowedCSVs and goes through once allowed (story 2).
// Without bundle lookups (the bundles are embedded), approval maps the plan's
// CSVs to packages through the Subscriptions' currentCSV.
func TestRealOLM(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skipf("the real-OLM end-to-end test runs with %s=1: run `make e2e-olm`", enableEnv)
	}
	began := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plane, err := localplane.Start("olm-e2e")
	testkit.FatalOrSkip(t, "starting the olm-e2e API server", err)
	t.Cleanup(func() {
		if err := plane.Stop(); err != nil {
			t.Logf("stopping the API server: %v", err)
		}
	})
	c := plane.Client
	mark := phases(t, began)
	mark("API server up")

	olm, err := localplane.StartOLM(ctx, plane)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of OLM's logs:\n%s", olm.LogTail(40))
		}
		olm.Stop()
	})
	mark("OLM up, catalog READY")

	// The OperatorPolicy controller.
	ctrl.SetLogger(logr.Discard())
	mgr, err := testkit.NewManager(plane.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := operatorpolicy.Setup(mgr, operatorpolicy.Options{}); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-stopped })

	policy := readFixture(t, "operatorpolicy.yaml")
	testkit.ApplyObjects(t, c, policy)
	key := client.ObjectKeyFromObject(policy)
	ns := key.Namespace
	waitPolicy(t, c, key, "Compliant with tiny-operator.v0.1.0 installed", func(op *v1beta1.OperatorPolicy) string {
		return firstProblem(op,
			op.Status.ComplianceState == policyv1.Compliant,
			hasRelated(op, "ClusterServiceVersion", "tiny-operator.v0.1.0", "Resource found as expected"),
			hasRelated(op, "Deployment", "tiny-operator-controller", "Deployment Available"),
			hasRelated(op, "CatalogSource", "fleetpolicy-examples", "Resource found as expected"),
			hasCondition(op, sharedop.TypeClusterServiceVersionCompliant, metav1.ConditionTrue, "InstallSucceeded"),
		)
	})
	mark("installed, policy Compliant")
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tiny-operator"}, sub); err != nil {
		t.Fatal(err)
	}
	if sub.Spec.InstallPlanApproval != operatorsv1alpha1.ApprovalManual {
		t.Errorf("installPlanApproval %q, want Manual", sub.Spec.InstallPlanApproval)
	}

	// OLM offers v0.2.0 right away; the policy allows only v0.1.0. Its status
	// is written after the approval decision of the same reconcile.
	waitPolicy(t, c, key, "the upgrade to v0.2.0 available, not approved", func(op *v1beta1.OperatorPolicy) string {
		return firstProblem(op,
			op.Status.ComplianceState == policyv1.Compliant,
			hasCondition(op, sharedop.TypeInstallPlanCompliant, metav1.ConditionTrue, "UpgradeAvailable"),
		)
	})
	plans := &operatorsv1alpha1.InstallPlanList{}
	if err := c.List(ctx, plans, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, plan := range plans.Items {
		if slices.Contains(plan.Spec.ClusterServiceVersionNames, "tiny-operator.v0.2.0") && plan.Spec.Approved {
			t.Fatalf("InstallPlan %s for tiny-operator.v0.2.0 was approved although the policy does not allow it", plan.Name)
		}
	}
	mark("upgrade held back")

	op := &v1beta1.OperatorPolicy{}
	if err := c.Get(ctx, key, op); err != nil {
		t.Fatal(err)
	}
	op.Spec.AllowedCSVs = append(op.Spec.AllowedCSVs, "tiny-operator.v0.2.0")
	if err := c.Update(ctx, op); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, c, key, "Compliant with tiny-operator.v0.2.0 installed", func(op *v1beta1.OperatorPolicy) string {
		return firstProblem(op,
			op.Status.ComplianceState == policyv1.Compliant,
			hasRelated(op, "ClusterServiceVersion", "tiny-operator.v0.2.0", "Resource found as expected"),
			hasRelated(op, "Deployment", "tiny-operator-controller", "Deployment Available"),
		)
	})
	mark("upgraded, policy Compliant")

	// The real OLM serves no PackageManifests here (no packageserver): a
	// policy that names only the package and its namespace adopts the
	// Subscription there, as OCM does without a PackageManifest; one that
	// does not name the namespace cannot be defaulted.
	adopting := &v1beta1.OperatorPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "managed-cluster", Name: "adopting"},
		Spec: v1beta1.OperatorPolicySpec{RemediationAction: "inform", Severity: "low",
			Subscription: v1beta1.Subscription{Name: "tiny-operator", Namespace: ns}},
	}
	unnamed := adopting.DeepCopy()
	unnamed.Name, unnamed.Spec.Subscription.Namespace = "no-namespace", ""
	if err := localplane.EnsureNamespace(ctx, c, adopting.Namespace); err != nil {
		t.Fatal(err)
	}
	for _, op := range []*v1beta1.OperatorPolicy{adopting, unnamed} {
		if err := c.Create(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	waitPolicy(t, c, client.ObjectKeyFromObject(adopting), "Compliant, adopting the Subscription", func(op *v1beta1.OperatorPolicy) string {
		return firstProblem(op,
			op.Status.ComplianceState == policyv1.Compliant,
			hasCondition(op, sharedop.TypeSubscriptionCompliant, metav1.ConditionTrue, "SubscriptionMatches"),
		)
	})
	waitPolicy(t, c, client.ObjectKeyFromObject(unnamed), "invalid: no PackageManifest", func(op *v1beta1.OperatorPolicy) string {
		return firstProblem(op,
			op.Status.ComplianceState == policyv1.NonCompliant,
			hasCondition(op, sharedop.TypeValidPolicySpec, metav1.ConditionFalse, "InvalidPolicySpec"),
			hasMessage(op, sharedop.TypeValidPolicySpec, "the subscription defaults could not be determined because the PackageManifest was not found"),
		)
	})
	mark("subscription defaults without packageserver")
}

// phases logs how long each phase of the test took, and the total.
func phases(t *testing.T, began time.Time) func(string) {
	last := began
	return func(what string) {
		now := time.Now()
		t.Logf("%-32s %6.1fs (total %6.1fs)", what, now.Sub(last).Seconds(), now.Sub(began).Seconds())
		last = now
	}
}

// readFixture reads the one object of a manifest of testdata/olm-catalog.
func readFixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(fixtureDir(t), name)
	objs, err := localplane.ReadManifestFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("%s: want one object, got %d", path, len(objs))
	}
	return objs[0]
}

// waitPolicy waits up to 3 minutes for the OperatorPolicy's status of its
// current generation to pass check.
func waitPolicy(t *testing.T, c client.Client, key client.ObjectKey, what string, check func(*v1beta1.OperatorPolicy) string) {
	t.Helper()
	testkit.WaitOperatorPolicy(t, c, key.Namespace, key.Name, 3*time.Minute, what, check, nil)
}

// firstProblem returns "" when ok holds and every problem is "", else the
// first problem with the policy's status.
func firstProblem(op *v1beta1.OperatorPolicy, ok bool, problems ...string) string {
	if !ok {
		problems = append([]string{fmt.Sprintf("compliant is %q", op.Status.ComplianceState)}, problems...)
	}
	for _, p := range problems {
		if p == "" {
			continue
		}
		var lines []string
		for _, cond := range op.Status.Conditions {
			lines = append(lines, fmt.Sprintf("  %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message))
		}
		return p + "\nconditions:\n" + strings.Join(lines, "\n")
	}
	return ""
}

func hasCondition(op *v1beta1.OperatorPolicy, typ string, status metav1.ConditionStatus, reason string) string {
	cond := meta.FindStatusCondition(op.Status.Conditions, typ)
	if cond == nil || cond.Status != status || cond.Reason != reason {
		return fmt.Sprintf("condition %s is not %s/%s", typ, status, reason)
	}
	return ""
}

// hasMessage checks that the condition's message contains part.
func hasMessage(op *v1beta1.OperatorPolicy, typ, part string) string {
	if cond := meta.FindStatusCondition(op.Status.Conditions, typ); cond == nil || !strings.Contains(cond.Message, part) {
		return fmt.Sprintf("condition %s does not say %q", typ, part)
	}
	return ""
}

func hasRelated(op *v1beta1.OperatorPolicy, kind, name, reason string) string {
	for _, ro := range op.Status.RelatedObjects {
		if ro.Object.Kind == kind && ro.Object.Metadata.Name == name {
			if ro.Compliant != string(policyv1.Compliant) || ro.Reason != reason {
				return fmt.Sprintf("related %s %s is %s/%s", kind, name, ro.Compliant, ro.Reason)
			}
			return ""
		}
	}
	return fmt.Sprintf("no related %s %s", kind, name)
}
