package replication

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

// TestReplicasAgreeWithBuild: the shortcuts of Replicas give exactly what Build,
// Digest and json.Marshal give, for every kind of root.
func TestReplicasAgreeWithBuild(t *testing.T) {
	no, yes := false, true
	sets := dependency.PolicySets{{Namespace: "policies", Name: "set"}: {"m1", "m2"}}
	htmlRoot := root(nil)
	htmlRoot.Annotations["note"] = `<b>&"quoted"</b>`
	htmlRoot.Labels["team"] = "a&b"
	bare := root(nil)
	bare.Labels, bare.Annotations, bare.Spec.Dependencies, bare.Spec.PolicyTemplates = nil, nil, nil, nil
	for name, tc := range map[string]struct {
		root *policyv1.Policy
		sets dependency.PolicySets
	}{
		"copyPolicyMetadata unset": {root: root(nil)},
		"copyPolicyMetadata true":  {root: root(&yes)},
		"copyPolicyMetadata false": {root: root(&no)},
		"PolicySet dependencies":   {root: root(nil), sets: sets},
		"characters JSON escapes":  {root: htmlRoot},
		"no metadata, no spec":     {root: bare},
	} {
		t.Run(name, func(t *testing.T) {
			r := For(tc.root, tc.sets)
			for _, cluster := range []string{"c1", "cluster-two"} {
				for _, action := range []policyv1.RemediationAction{policyv1.Inform, policyv1.Enforce, "", "enforce"} {
					want := Build(tc.root, cluster, action, tc.sets)
					if got := r.Digest(cluster, action); got != Digest(want) {
						t.Errorf("%s/%s: Digest %s, Build's %s", cluster, action, got, Digest(want))
					}
					if got := r.Build(cluster, action); !equality.Semantic.DeepEqual(got, want) {
						t.Errorf("%s/%s: Build differs", cluster, action)
					}
					want.ResourceVersion = "42"
					var decoded policyv1.Policy
					if err := json.Unmarshal(r.JSON(cluster, action, "42"), &decoded); err != nil {
						t.Fatalf("%s/%s: JSON does not decode: %v", cluster, action, err)
					}
					if !equality.Semantic.DeepEqual(&decoded, want) {
						wantJSON, _ := json.Marshal(want)
						t.Errorf("%s/%s: JSON\n%s\nwant the equivalent of\n%s", cluster, action, r.JSON(cluster, action, "42"), wantJSON)
					}
				}
			}
			if tc.root.ResourceVersion != "7" || tc.root.Spec.RemediationAction != policyv1.Inform {
				t.Error("the root was modified")
			}
		})
	}
}

// TestReplicasDigestSeesEveryDifference: the digest of one cluster's replica
// differs from another cluster's and from another action's.
func TestReplicasDigestSeesEveryDifference(t *testing.T) {
	r := For(root(nil), nil)
	digests := map[string]string{}
	for _, cluster := range []string{"a", "b"} {
		for _, action := range []policyv1.RemediationAction{policyv1.Inform, policyv1.Enforce} {
			d := r.Digest(cluster, action)
			if other, dup := digests[d]; dup {
				t.Errorf("%s/%s has the digest of %s", cluster, action, other)
			}
			digests[d] = cluster + "/" + string(action)
		}
	}
}

func BenchmarkReplicasDigest(b *testing.B) {
	p := root(nil)
	b.Run("Build+Digest", func(b *testing.B) {
		for b.Loop() {
			_ = Digest(Build(p, "cluster", policyv1.Inform, nil))
		}
	})
	b.Run("Replicas.Digest", func(b *testing.B) {
		r := For(p, nil)
		for b.Loop() {
			_ = r.Digest("cluster", policyv1.Inform)
		}
	})
}
