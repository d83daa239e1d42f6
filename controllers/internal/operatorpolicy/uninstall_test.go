package operatorpolicy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// TestReleaseFinalizers is the uninstall path (fleetpolicy-spoke --uninstall)
// on an API server where the spoke has stopped (none runs on it): every
// OperatorPolicy's finalizer is released, a policy already being deleted goes,
// other finalizers stay, and no operator object is deleted. Then, with the
// controller running, deleting the OperatorPolicy CRD deletes every policy
// and removes no operator.
func TestReleaseFinalizers(t *testing.T) {
	ctx := context.Background()
	plane, err := localplane.Start("uninstall")
	testkit.FatalOrSkip(t, "starting the uninstall API server", err)
	defer func() {
		if err := plane.Stop(); err != nil {
			t.Error(err)
		}
	}()
	pc := plane.Client
	const ns, other = "uninstall", "example.com/other"
	if err := localplane.EnsureNamespace(ctx, pc, ns); err != nil {
		t.Fatal(err)
	}
	sub := subscription(ns, "held")
	sub.Spec = &operatorsv1alpha1.SubscriptionSpec{Package: "held", CatalogSource: catalog, CatalogSourceNamespace: catalogNS}
	if err := pc.Create(ctx, sub); err != nil {
		t.Fatal(err)
	}
	og := operatorGroup(ns, defaultOG)
	if err := pc.Create(ctx, og); err != nil {
		t.Fatal(err)
	}
	create := func(name string, finalizers ...string) *v1beta1.OperatorPolicy {
		t.Helper()
		op := &v1beta1.OperatorPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers},
			Spec:       policySpec(ns, name, catalog, "*"),
		}
		if err := pc.Create(ctx, op); err != nil {
			t.Fatal(err)
		}
		return op
	}
	create("held", operatorpolicy.Finalizer)
	create("held-with-other", operatorpolicy.Finalizer, other)
	create("free")
	// The operator of "free", which the CRD deletion below must not remove.
	freeSub := subscription(ns, "free")
	freeSub.Spec = &operatorsv1alpha1.SubscriptionSpec{Package: "free", CatalogSource: catalog, CatalogSourceNamespace: catalogNS}
	if err := pc.Create(ctx, freeSub); err != nil {
		t.Fatal(err)
	}
	if err := pc.Delete(ctx, create("deleting", operatorpolicy.Finalizer)); err != nil {
		t.Fatal(err)
	}

	released, err := operatorpolicy.ReleaseFinalizers(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(released))
	for i, key := range released {
		names[i] = key.Name
	}
	slices.Sort(names)
	if want := []string{"deleting", "held", "held-with-other"}; !slices.Equal(names, want) {
		t.Errorf("released %v, want %v", names, want)
	}

	for name, want := range map[string][]string{"held": nil, "held-with-other": {other}, "free": nil} {
		op := &v1beta1.OperatorPolicy{}
		if err := pc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, op); err != nil {
			t.Fatalf("OperatorPolicy %s: %v", name, err)
		}
		if !slices.Equal(op.Finalizers, want) {
			t.Errorf("OperatorPolicy %s has finalizers %v, want %v", name, op.Finalizers, want)
		}
	}
	if err := pc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deleting"}, &v1beta1.OperatorPolicy{}); err == nil {
		t.Error("the OperatorPolicy being deleted is still there")
	}
	for _, obj := range []client.Object{sub, og} {
		if err := pc.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil || !obj.GetDeletionTimestamp().IsZero() {
			t.Errorf("%T %s was touched: %v", obj, obj.GetName(), err)
		}
	}

	// Again: nothing left to release.
	if released, err := operatorpolicy.ReleaseFinalizers(ctx, pc); err != nil || len(released) != 0 {
		t.Errorf("a second run released %v (%v)", released, err)
	}

	t.Run("deleting the CRD while the spoke runs releases without removing", func(t *testing.T) {
		mgr, err := testkit.NewManager(plane.Config) // beside TestMain's, which runs a controller of the same name
		if err == nil {
			err = operatorpolicy.Setup(mgr, operatorpolicy.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		mgrCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := mgr.Start(mgrCtx); err != nil {
				t.Error(err)
			}
		}()
		defer func() { stop(); <-done }()

		testkit.Eventually(t, 30*time.Second, "the enforcing policy in fleetpolicy's spelling holds the finalizer", func() string {
			op := &v1beta1.OperatorPolicy{}
			if err := pc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "free"}, op); err != nil {
				return err.Error()
			}
			if !controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer) {
				return "no finalizer"
			}
			return ""
		})
		// The other finalizer would hold the CRD's deletion: it is not ours.
		other := &v1beta1.OperatorPolicy{}
		if err := pc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "held-with-other"}, other); err != nil {
			t.Fatal(err)
		}
		other.Finalizers = nil
		if err := pc.Update(ctx, other); err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "operatorpolicies.policy.open-cluster-management.io"}}
		if err := pc.Delete(ctx, crd); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 30*time.Second, "the CRD and its OperatorPolicies are gone", func() string {
			if err := pc.Get(ctx, client.ObjectKeyFromObject(crd), crd); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("the CRD is still there (%v)", err)
			}
			return ""
		})
		for _, obj := range []client.Object{subscription(ns, "free"), og} {
			if err := pc.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil || !obj.GetDeletionTimestamp().IsZero() {
				t.Errorf("%T %s was removed: %v", obj, obj.GetName(), err)
			}
		}
	})
}
