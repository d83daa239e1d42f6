package replication

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

// Replicas gives the replicas of one root policy for many clusters at the cost
// of one spec encoding per remediationAction: the replicas of a root differ
// only in their namespace, their cluster labels and their action. Digest and
// JSON agree exactly with Digest(Build(...)) and json.Marshal(Build(...)).
// A Replicas is safe for concurrent use; it reads the root and the sets, which
// must not change while it is in use.
type Replicas struct {
	root            *policyv1.Policy
	sets            dependency.PolicySets
	annotations     map[string]string // the same on every replica
	annotationsJSON []byte            // encoded as Digest encodes them

	mu    sync.Mutex
	specs map[policyv1.RemediationAction]*encodedSpec
}

// encodedSpec is the spec of the replicas with one remediationAction: its JSON,
// and the digest state after it (Digest hashes the spec first).
type encodedSpec struct {
	json   []byte
	digest hash.Cloner
}

// For returns the replicas of root; sets are the PolicySets its dependencies
// are canonicalised with, as for Build.
func For(root *policyv1.Policy, sets dependency.PolicySets) *Replicas {
	annotations := replicaAnnotations(root)
	annotationsJSON, _ := json.Marshal(annotations) // strings only: cannot fail
	return &Replicas{root: root, sets: sets, annotations: annotations, annotationsJSON: annotationsJSON,
		specs: map[policyv1.RemediationAction]*encodedSpec{}}
}

// Build is Build(root, cluster, action, sets).
func (r *Replicas) Build(cluster string, action policyv1.RemediationAction) *policyv1.Policy {
	return Build(r.root, cluster, action, r.sets)
}

// Digest is Digest(r.Build(cluster, action)).
func (r *Replicas) Digest(cluster string, action policyv1.RemediationAction) string {
	spec := r.spec(action)
	h, _ := spec.digest.Clone() // a sha256 state always clones
	labels, _ := json.Marshal(replicaLabels(r.root, cluster))
	h.Write(labels)
	h.Write([]byte{'\n'})
	h.Write(r.annotationsJSON)
	h.Write([]byte{'\n'})
	return hex.EncodeToString(h.Sum(nil))
}

// JSON is the replica for cluster with action as json.Marshal encodes it, with
// resourceVersion set (empty for a create).
func (r *Replicas) JSON(cluster string, action policyv1.RemediationAction, resourceVersion string) []byte {
	spec := r.spec(action)
	meta, _ := json.Marshal(metav1.ObjectMeta{ // strings and maps only: cannot fail
		Name: Name(r.root.Namespace, r.root.Name), Namespace: cluster, ResourceVersion: resourceVersion,
		Labels: replicaLabels(r.root, cluster), Annotations: r.annotations,
	})
	var b bytes.Buffer
	b.Grow(len(meta) + len(spec.json) + 128)
	b.WriteString(`{"kind":"Policy","apiVersion":"`)
	b.WriteString(policyv1.GroupVersion.String())
	b.WriteString(`","metadata":`)
	b.Write(meta)
	b.WriteString(`,"spec":`)
	b.Write(spec.json)
	b.WriteString(`,"status":{}}`)
	return b.Bytes()
}

// spec returns the encoded spec for action, encoding it on first use.
func (r *Replicas) spec(action policyv1.RemediationAction) *encodedSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.specs[action]; ok {
		return s
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(Build(r.root, "", action, r.sets).Spec) // as Digest encodes it
	h := sha256.New()
	h.Write(buf.Bytes())
	s := &encodedSpec{json: bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), digest: h.(hash.Cloner)}
	r.specs[action] = s
	return s
}
