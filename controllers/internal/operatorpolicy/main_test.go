package operatorpolicy_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/olmfake"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// The fake catalogs every test installs from.
const (
	catalogNS = "olm-catalogs"
	// catalog serves every package of the tests but health-op.
	catalog = "fake-catalog"
	// flakyCatalog serves health-op; TestCatalogSourceHealth breaks it.
	flakyCatalog = "flaky-catalog"
	// defaultNamespace is the controller's Options.DefaultNamespace.
	defaultNamespace = "operators-by-default"
)

var (
	c   client.Client
	olm *olmfake.OLM
)

// bundle is a first version of pkg with one Deployment, <pkg>-controller.
func bundle(pkg, csv, replaces string, crds ...string) olmfake.Bundle {
	return olmfake.Bundle{Package: pkg, Channel: "stable", CSV: csv, Replaces: replaces, Deployments: []string{pkg + "-controller"}, CRDs: crds}
}

func TestMain(m *testing.M) {
	os.Exit(testkit.RunWithPlane(m, "spoke", nil, setup))
}

// runMain starts an API server with the OLM CRDs, the OperatorPolicy
// controller and the OLM fake in one manager, and the fake catalogs.
// setup starts the OperatorPolicy controller and the fake OLM on the plane
// the package's tests share, with the catalogs they install from.
func setup(ctx context.Context, plane *localplane.Plane) error {
	c = plane.Client
	ctrl.SetLogger(logr.Discard())

	mgr, err := testkit.NewManager(plane.Config)
	if err == nil {
		err = operatorpolicy.Setup(mgr, operatorpolicy.Options{Concurrency: 2, DefaultNamespace: defaultNamespace})
	}
	if err == nil {
		olm, err = olmfake.Setup(mgr)
	}
	if err == nil {
		err = localplane.EnsureNamespace(ctx, c, catalogNS)
	}
	if err == nil {
		err = olm.AddCatalog(ctx, catalogNS, catalog,
			bundle("install-op", "install-op.v1", "", "widgets.install.example.com"),
			bundle("inform-op", "inform-op.v1", ""),
			bundle("upgrade-op", "upgrade-op.v1", ""),
			bundle("alpha", "alpha.v1", ""),
			bundle("beta", "beta.v1", ""),
			bundle("remove-default", "remove-default.v1", "", "gadgets.remove-default.example.com"),
			bundle("remove-keep", "remove-keep.v1", "", "gadgets.remove-keep.example.com"),
			bundle("remove-all", "remove-all.v1", "", "gadgets.remove-all.example.com"),
			bundle("remove-shared-og", "remove-shared-og.v1", ""),
			bundle("remove-mustnothave", "remove-mustnothave.v1", ""),
			bundle("remove-inform", "remove-inform.v1", ""),
			bundle("deploy-op", "deploy-op.v1", ""),
			bundle("template-op", "template-op.v1", ""),
			bundle("del-ocm", "del-ocm.v1", ""),
			bundle("del-ocm-mustnothave", "del-ocm-mustnothave.v1", ""),
			bundle("del-ocm-opt-in", "del-ocm-opt-in.v1", ""),
			bundle("del-user", "del-user.v1", ""),
			bundle("del-pending", "del-pending.v1", ""),
			bundle("del-owner-gone", "del-owner-gone.v1", ""),
			bundle("del-template-removed", "del-template-removed.v1", ""),
			bundle("del-always", "del-always.v1", ""),
			bundle("og-fields-op", "og-fields-op.v1", ""),
			bundle("adopt-op", "adopt-op.v1", ""),
			bundle("pm-op", "pm-op.v1", ""),
			bundle("pm-default-op", "pm-default-op.v1", ""),
			bundle("approval-op", "approval-op.v1", ""),
		)
	}
	if err == nil {
		err = olm.AddCatalog(ctx, catalogNS, flakyCatalog, bundle("health-op", "health-op.v1", ""))
	}
	if err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return nil
}

var namespaceSeq atomic.Int64

// newNamespace creates a namespace of its own for a test (namespaces are never
// deleted on a bare API server).
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, namespaceSeq.Add(1))
	if err := localplane.EnsureNamespace(context.Background(), c, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// policySpec is an enforcing spec for pkg in namespace ns from catalog
// allowing allowed.
func policySpec(ns, pkg, source string, allowed ...string) v1beta1.OperatorPolicySpec {
	return v1beta1.OperatorPolicySpec{
		RemediationAction: "enforce",
		Severity:          "medium",
		Subscription: v1beta1.Subscription{
			Name: pkg, Namespace: ns, Channel: "stable", Source: source, SourceNamespace: catalogNS,
		},
		AllowedCSVs: allowed,
	}
}

// createPolicy creates an OperatorPolicy in ns.
func createPolicy(t *testing.T, ns, name string, spec v1beta1.OperatorPolicySpec, owners ...metav1.OwnerReference) *v1beta1.OperatorPolicy {
	t.Helper()
	op := &v1beta1.OperatorPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners}, Spec: spec}
	if err := c.Create(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	return op
}

// editPolicy changes an OperatorPolicy's spec.
func editPolicy(t *testing.T, ns, name string, edit func(*v1beta1.OperatorPolicySpec)) {
	t.Helper()
	// The controller writes the policy too (finalizer, status): edit the
	// latest version.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		op := &v1beta1.OperatorPolicy{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, op); err != nil {
			return err
		}
		edit(&op.Spec)
		return c.Update(context.Background(), op)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitPolicy waits until the OperatorPolicy's status, for its current
// generation, passes check; it returns the policy.
func waitPolicy(t *testing.T, ns, name, what string, check func(*v1beta1.OperatorPolicy) string) *v1beta1.OperatorPolicy {
	t.Helper()
	return testkit.WaitOperatorPolicy(t, c, ns, name, 30*time.Second, what, check, describe)
}

// describe is a policy's status in a few lines, for failure messages.
func describe(op *v1beta1.OperatorPolicy) string {
	lines := []string{string(op.Status.ComplianceState)}
	for _, cond := range op.Status.Conditions {
		lines = append(lines, fmt.Sprintf("  %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message))
	}
	for _, ro := range op.Status.RelatedObjects {
		lines = append(lines, fmt.Sprintf("  %s %s: %s %s", ro.Object.Kind, ro.Object.Metadata.Name, ro.Compliant, ro.Reason))
	}
	return strings.Join(lines, "\n")
}

// compliance checks status.compliant.
func compliance(want policyv1.ComplianceState) func(*v1beta1.OperatorPolicy) string {
	return func(op *v1beta1.OperatorPolicy) string {
		if op.Status.ComplianceState != want {
			return fmt.Sprintf("compliant is %q, want %q", op.Status.ComplianceState, want)
		}
		return ""
	}
}

// all passes when every check passes.
func all(checks ...func(*v1beta1.OperatorPolicy) string) func(*v1beta1.OperatorPolicy) string {
	return func(op *v1beta1.OperatorPolicy) string {
		for _, check := range checks {
			if problem := check(op); problem != "" {
				return problem
			}
		}
		return ""
	}
}

// condition checks a condition's status and reason (any reason when empty),
// and that its message contains each of messageParts.
func condition(typ string, status metav1.ConditionStatus, reason string, messageParts ...string) func(*v1beta1.OperatorPolicy) string {
	return func(op *v1beta1.OperatorPolicy) string {
		cond := meta.FindStatusCondition(op.Status.Conditions, typ)
		if cond == nil {
			return "no condition " + typ
		}
		if cond.Status != status || (reason != "" && cond.Reason != reason) {
			return fmt.Sprintf("condition %s is %s/%s, want %s/%s", typ, cond.Status, cond.Reason, status, reason)
		}
		for _, part := range messageParts {
			if !strings.Contains(cond.Message, part) {
				return fmt.Sprintf("condition %s message %q does not contain %q", typ, cond.Message, part)
			}
		}
		return ""
	}
}

// related checks that a relatedObject of kind and name has compliant and reason.
func related(kind, name, compliant, reason string) func(*v1beta1.OperatorPolicy) string {
	return func(op *v1beta1.OperatorPolicy) string {
		for _, ro := range op.Status.RelatedObjects {
			if ro.Object.Kind == kind && ro.Object.Metadata.Name == name {
				if ro.Compliant != compliant || ro.Reason != reason {
					return fmt.Sprintf("related %s %s is %q/%q, want %q/%q", kind, name, ro.Compliant, ro.Reason, compliant, reason)
				}
				return ""
			}
		}
		return fmt.Sprintf("no related %s %s", kind, name)
	}
}

// installPlans lists the InstallPlans of ns.
func installPlans(t *testing.T, ns string) []operatorsv1alpha1.InstallPlan {
	t.Helper()
	list := &operatorsv1alpha1.InstallPlanList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// exists reports whether obj exists (and is not being deleted), reading it into obj.
func exists(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj.GetDeletionTimestamp().IsZero()
}

// complianceEvents are the messages of the compliance events about the object
// of kind and name in ns, oldest first.
func complianceEvents(t *testing.T, ns, kind, name string) []corev1.Event {
	t.Helper()
	list := &corev1.EventList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && strings.HasPrefix(e.Reason, "policy: ") {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Event) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func subscription(ns, name string) *operatorsv1alpha1.Subscription {
	return &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func operatorGroup(ns, name string) *operatorsv1.OperatorGroup {
	return &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func csv(ns, name string) *operatorsv1alpha1.ClusterServiceVersion {
	return &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
