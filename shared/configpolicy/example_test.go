package configpolicy_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// One object template of a musthave ConfigurationPolicy against the object on
// the cluster: Compare finds what differs, Decide what inform reports and what
// enforce writes.
func ExampleDecide() {
	desired := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "team-a", "labels": map[string]any{"owner": "team-a"}},
		"data":     map[string]any{"log-level": "info"},
	}
	existing := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "team-a"},
		"data":     map[string]any{"log-level": "debug", "extra": "kept by musthave"},
	}
	cmp := configpolicy.Compare(desired, existing, policyv1.MustHave, policyv1.MustHave)
	fmt.Println("mismatches:", cmp.Mismatches)
	fmt.Println("enforce writes data:", cmp.Merged["data"])

	inform := configpolicy.Decide(policyv1.MustHave, true, cmp, false)
	enforce := configpolicy.Decide(policyv1.MustHave, true, cmp, true)
	fmt.Printf("inform:  compliant=%v action=%q reason=%q\n", inform.Compliant, inform.Action, inform.Reason)
	fmt.Printf("enforce: compliant=%v action=%q reason=%q\n", enforce.Compliant, enforce.Action, enforce.Reason)

	missing := configpolicy.Decide(policyv1.MustHave, false, configpolicy.Comparison{}, false)
	fmt.Printf("missing: compliant=%v reason=%q\n", missing.Compliant, missing.Reason)
	// Output:
	// mismatches: [data.log-level metadata.labels]
	// enforce writes data: map[extra:kept by musthave log-level:info]
	// inform:  compliant=false action="" reason="found but not as specified"
	// enforce: compliant=true action="update" reason="was updated successfully"
	// missing: compliant=false reason="not found"
}

// evaluationInterval values: watch (the default), never, or a minimum time
// between evaluations; anything else is refused naming the field.
func ExampleParseInterval() {
	kinds := map[configpolicy.IntervalKind]string{
		configpolicy.IntervalWatch: "watch", configpolicy.IntervalNever: "never", configpolicy.IntervalEvery: "every",
	}
	for _, v := range []string{"", "never", "1m30s", "soon"} {
		in, err := configpolicy.ParseInterval(v, field.NewPath("spec", "evaluationInterval", "compliant"))
		if err != nil {
			fmt.Printf("%q: %v\n", v, err)
			continue
		}
		fmt.Printf("%q: %s %v\n", v, kinds[in.Kind], in.Every)
	}
	next, err := configpolicy.NextEvaluation(policyv1.EvaluationInterval{Compliant: "10m", NonCompliant: "watch"}, true, true, false)
	fmt.Printf("compliant with 10m: %+v %v\n", next, err)
	// Output:
	// "": watch 0s
	// "never": never 0s
	// "1m30s": every 1m30s
	// "soon": spec.evaluationInterval.compliant: Invalid value: "soon": must be a duration such as 10s or 1m30s, never or watch
	// compliant with 10m: {KeepWatches:false Now:false After:10m0s} <nil>
}

// A namespaceSelector picks the namespaces a namespaced object template applies
// to: include patterns, minus exclude patterns, filtered by labels.
func ExampleSelectNamespaces() {
	tenant := map[string]string{"tenant": "true"}
	sel := policyv1.Target{
		Include:     []policyv1.NonEmptyString{"team-*", "kube-system"},
		Exclude:     []policyv1.NonEmptyString{"team-sandbox"},
		MatchLabels: &tenant,
	}
	names, err := configpolicy.SelectNamespaces(sel, []configpolicy.Namespace{
		{Name: "team-a", Labels: tenant},
		{Name: "team-b", Labels: tenant, Terminating: true},
		{Name: "team-c"},
		{Name: "team-sandbox", Labels: tenant},
		{Name: "kube-system", Labels: tenant},
		{Name: "default", Labels: tenant},
	}, field.NewPath("spec", "namespaceSelector"))
	fmt.Println(names, err)
	// Output:
	// [kube-system team-a team-b] <nil>
}
