package replication

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

func root(copyMeta *bool) *policyv1.Policy {
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "policies", ResourceVersion: "7", Finalizers: []string{"f"},
			Labels: map[string]string{"team": "a", PolicyPrefix + "category": "cm"},
			Annotations: map[string]string{
				"note": "x", PolicyPrefix + "standards": "NIST", AnnotationTrigger: "1",
				AnnotationLastApplied: "{}",
			},
		},
		Spec: policyv1.PolicySpec{
			RemediationAction:  policyv1.Inform,
			CopyPolicyMetadata: copyMeta,
			Dependencies: []policyv1.PolicyDependency{
				{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Name: "base", Compliance: policyv1.Compliant},
				{APIVersion: "policy.open-cluster-management.io/v1beta1", Kind: "PolicySet", Name: "set", Compliance: policyv1.Compliant},
			},
			PolicyTemplates: []*policyv1.PolicyTemplate{{
				ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy"}`)},
				ExtraDependencies: []policyv1.PolicyDependency{
					{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Name: "other", Namespace: "elsewhere", Compliance: policyv1.NonCompliant},
				},
			}},
		},
		Status: policyv1.PolicyStatus{ComplianceState: policyv1.Compliant},
	}
}

func TestBuild(t *testing.T) {
	sets := dependency.PolicySets{{Namespace: "policies", Name: "set"}: {"m1", "m2"}}
	f := false
	for _, tc := range []struct {
		name            string
		copyMeta        *bool
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{
		{"copyPolicyMetadata unset copies all", nil,
			map[string]string{"team": "a", PolicyPrefix + "category": "cm"},
			map[string]string{"note": "x", PolicyPrefix + "standards": "NIST"}},
		{"copyPolicyMetadata false copies policy ones only", &f,
			map[string]string{PolicyPrefix + "category": "cm"},
			map[string]string{PolicyPrefix + "standards": "NIST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := root(tc.copyMeta)
			before := r.DeepCopy()
			got := Build(r, "cluster-a", "enforce", sets)

			if got.Name != "policies.p" || got.Namespace != "cluster-a" {
				t.Fatalf("name %s/%s", got.Namespace, got.Name)
			}
			tc.wantLabels[LabelClusterName] = "cluster-a"
			tc.wantLabels[LabelClusterNamespace] = "cluster-a"
			tc.wantLabels[LabelRootPolicy] = "policies.p"
			tc.wantAnnotations[AnnotationArgoCompare] = "IgnoreExtraneous"
			if !maps.Equal(got.Labels, tc.wantLabels) {
				t.Errorf("labels %v, want %v", got.Labels, tc.wantLabels)
			}
			if !maps.Equal(got.Annotations, tc.wantAnnotations) {
				t.Errorf("annotations %v, want %v", got.Annotations, tc.wantAnnotations)
			}
			if got.Spec.RemediationAction != "enforce" {
				t.Errorf("remediationAction %q", got.Spec.RemediationAction)
			}
			if got.ResourceVersion != "" || got.Finalizers != nil || got.Status.ComplianceState != "" {
				t.Errorf("server or status fields copied: %+v", got.ObjectMeta)
			}
			var names []string
			for _, d := range got.Spec.Dependencies {
				names = append(names, d.Kind+":"+d.Namespace+"/"+d.Name)
			}
			want := []string{"Policy:/policies.base", "Policy:/policies.m1", "Policy:/policies.m2"}
			if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
				t.Errorf("dependencies %v, want %v", names, want)
			}
			if d := got.Spec.PolicyTemplates[0].ExtraDependencies[0]; d.Name != "elsewhere.other" || d.Namespace != "" {
				t.Errorf("extraDependency %+v", d)
			}
			if !equalPolicies(r, before) {
				t.Error("Build modified the root")
			}
		})
	}
}

func equalPolicies(a, b *policyv1.Policy) bool { return equality.Semantic.DeepEqual(a, b) }

func TestRootOf(t *testing.T) {
	for _, tc := range []struct {
		label string
		want  types.NamespacedName
		ok    bool
	}{
		{"ns.name", types.NamespacedName{Namespace: "ns", Name: "name"}, true},
		{"ns.name.with.dots", types.NamespacedName{Namespace: "ns", Name: "name.with.dots"}, true},
		{"nodot", types.NamespacedName{}, false},
		{".name", types.NamespacedName{}, false},
	} {
		p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelRootPolicy: tc.label}}}
		got, ok := RootOf(p)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RootOf(%q) = %v, %v", tc.label, got, ok)
		}
	}
	if IsReplica(&policyv1.Policy{}) {
		t.Error("a policy without the label is a replica")
	}
}

func TestDigest(t *testing.T) {
	desired := Build(root(nil), "c", "inform", nil)
	if Digest(desired) != Digest(desired.DeepCopy()) {
		t.Fatal("digest of a copy differs")
	}
	same := desired.DeepCopy()
	same.ResourceVersion, same.Status.ComplianceState = "42", policyv1.Compliant
	if Digest(desired) != Digest(same) {
		t.Error("server metadata or status changed the digest")
	}
	for name, edit := range map[string]func(p *policyv1.Policy){
		"action":          func(p *policyv1.Policy) { p.Spec.RemediationAction = "enforce" },
		"template":        func(p *policyv1.Policy) { p.Spec.PolicyTemplates[0].IgnorePending = true },
		"label added":     func(p *policyv1.Policy) { p.Labels["x"] = "y" },
		"label removed":   func(p *policyv1.Policy) { delete(p.Labels, LabelRootPolicy) },
		"annotation":      func(p *policyv1.Policy) { p.Annotations["note"] = "z" },
		"dependency gone": func(p *policyv1.Policy) { p.Spec.Dependencies = p.Spec.Dependencies[1:] },
	} {
		changed := desired.DeepCopy()
		edit(changed)
		if Digest(desired) == Digest(changed) {
			t.Errorf("%s edit kept the digest", name)
		}
	}
}
