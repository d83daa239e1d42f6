package operatorpolicy

import (
	"cmp"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// FuzzNormalize feeds OperatorPolicy JSON (seed corpus in
// testdata/fuzz/FuzzNormalize: the six stories, OCM's spelling, both spellings
// agreeing, everything wrong) to Normalize and checks that it never panics, is
// deterministic, names the policy and spec fields in every error, and only
// returns canonical policies that the rest of the package accepts.
func FuzzNormalize(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		op := &v1beta1.OperatorPolicy{}
		if json.Unmarshal(data, op) != nil {
			return
		}
		p, err := Normalize(op)
		again, errAgain := Normalize(op)
		if !reflect.DeepEqual(p, again) || errorText(err) != errorText(errAgain) {
			t.Fatalf("not deterministic: %+v, %v then %+v, %v", p, err, again, errAgain)
		}
		if err != nil {
			checkFieldErrors(t, err, objectRef(op.Namespace, op.Name))
			return
		}
		// The cluster offers a PackageManifest of the policy's catalog.
		s := p.Subscription
		pm := packageManifest(cmp.Or(s.Source, catalog), cmp.Or(s.SourceNamespace, catalogNS), "stable", [2]string{"stable", ""})
		if p, err = ApplySubscriptionDefaults(p, SubscriptionDefaultsFrom{PackageManifest: pm, DefaultNamespace: opsNS}); err != nil {
			checkFieldErrors(t, err, objectRef(op.Namespace, op.Name))
			return
		}
		checkCanonical(t, p)

		if sub := DesiredSubscription(p); sub.Name != p.Subscription.Package || sub.Namespace != p.Subscription.Namespace {
			t.Fatalf("desired Subscription %s/%s for %+v", sub.Namespace, sub.Name, p.Subscription)
		}
		if _, err := DesiredOperatorGroup(p, nil, nil); err != nil {
			t.Fatalf("no OperatorGroup can be made in an empty namespace: %v", err)
		}
		want := policyv1.NonCompliant // nothing is installed
		if p.Remove {
			want = policyv1.Compliant // nothing is left
		}
		if ev := Evaluate(p, Observed{}, nil, t0); ev.Compliance != want {
			t.Fatalf("on an empty cluster: %s", ev.EventMessage)
		}
	})
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func checkFieldErrors(t *testing.T, err error, ref string) {
	t.Helper()
	for _, e := range fieldErrors(t, err, ref) {
		if !strings.HasPrefix(e.Field, "spec.") {
			t.Fatalf("error %q names field %q outside spec", e, e.Field)
		}
	}
}

// fieldErrors are the field errors of err, an error of Invalid for the policy
// ref; the test fails when err is not one.
func fieldErrors(t *testing.T, err error, ref string) field.ErrorList {
	t.Helper()
	var agg utilerrors.Aggregate
	if err == nil || !strings.HasPrefix(err.Error(), "OperatorPolicy "+ref+": ") || !errors.As(err, &agg) {
		t.Fatalf("error %v does not name policy %q with its field errors", err, ref)
	}
	var out field.ErrorList
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) {
			t.Fatalf("error %q is %T, not a field error", e, e)
		}
		out = append(out, fe)
	}
	return out
}

func checkCanonical(t *testing.T, p Policy) {
	t.Helper()
	if p.Subscription.Package == "" || p.Subscription.Namespace == "" {
		t.Fatalf("subscription without package or namespace: %+v", p.Subscription)
	}
	if p.Approval != operatorsv1alpha1.ApprovalAutomatic && p.Approval != operatorsv1alpha1.ApprovalManual {
		t.Fatalf("approval %q", p.Approval)
	}
	a := p.Allowed
	if a.All == (len(a.Names) > 0) || !slices.IsSorted(a.Names) || len(slices.Compact(slices.Clone(a.Names))) != len(a.Names) ||
		slices.Contains(a.Names, "") || slices.Contains(a.Names, AllCSVs) {
		t.Fatalf("allowed CSVs not canonical: %+v", a)
	}
	for _, e := range []Effect{p.Effects.CatalogSourceUnhealthy, p.Effects.DeploymentsUnavailable, p.Effects.UpgradesAvailable,
		p.Effects.UpgradesProgressing, p.Effects.DeprecationsPresent, p.Effects.MinorChannelUpgradeAvailable} {
		if e != EffectMessageOnly && e != EffectCondition && e != EffectNonCompliant {
			t.Fatalf("effect %q in %+v", e, p.Effects)
		}
	}
	r := p.Removal
	for _, a := range []v1beta1.RemovalAction{r.Subscriptions, r.ClusterServiceVersions, r.InstallPlans, r.CustomResourceDefinitions, r.APIServiceDefinitions} {
		if a != v1beta1.RemovalKeep && a != v1beta1.RemovalDelete {
			t.Fatalf("removal %q in %+v", a, r)
		}
	}
	if r.OperatorGroups != v1beta1.RemovalKeep && r.OperatorGroups != v1beta1.RemovalDelete && r.OperatorGroups != v1beta1.RemovalDeleteIfUnused {
		t.Fatalf("operatorGroups removal %q", r.OperatorGroups)
	}
	if og := p.OperatorGroup; og != nil {
		if og.Name == "" || og.Namespace != p.Subscription.Namespace || !slices.IsSorted(og.TargetNamespaces) ||
			(len(og.TargetNamespaces) > 0 && og.Selector != nil) {
			t.Fatalf("OperatorGroup not canonical: %+v", og)
		}
	}
}

// FuzzBundlePackage checks that reading a bundle lookup's properties never
// panics and that a package it reads reads back the same from a fresh document.
func FuzzBundlePackage(f *testing.F) {
	f.Fuzz(func(t *testing.T, properties string) {
		pkg, err := BundlePackage(properties)
		if err != nil || pkg == "" {
			return
		}
		value, _ := json.Marshal(map[string]string{"packageName": pkg})
		doc := `{"properties":[{"type":"olm.package","value":` + string(value) + `}]}`
		if again, err := BundlePackage(doc); again != pkg || err != nil {
			t.Fatalf("%q read %q, but %q reads %q, %v", properties, pkg, doc, again, err)
		}
	})
}
