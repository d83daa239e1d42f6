package replication

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/dependency"
)

// Labels and annotations a replica carries or drops.
const (
	LabelClusterName      = "policy.open-cluster-management.io/cluster-name"
	LabelClusterNamespace = "policy.open-cluster-management.io/cluster-namespace"
	LabelRootPolicy       = "policy.open-cluster-management.io/root-policy"

	PolicyPrefix          = "policy.open-cluster-management.io/"
	AnnotationArgoCompare = "argocd.argoproj.io/compare-options"
	AnnotationTrigger     = "policy.open-cluster-management.io/trigger-update"
	AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	argoIgnoreExtraneous  = "IgnoreExtraneous"
)

// Name is the name of a root policy's replicas: "<namespace>.<name>".
func Name(rootNamespace, rootName string) string { return rootNamespace + "." + rootName }

// RootOf returns the root policy a replica belongs to, from its root-policy
// label, and whether the object is a replica at all.
func RootOf(replica metav1.Object) (types.NamespacedName, bool) {
	root, ok := replica.GetLabels()[LabelRootPolicy]
	if !ok {
		return types.NamespacedName{}, false
	}
	ns, name, ok := strings.Cut(root, ".")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// IsReplica reports whether a Policy is a replica (carries the root-policy label).
func IsReplica(p metav1.Object) bool {
	_, ok := RootOf(p)
	return ok
}

// Build returns the replica of root for cluster with the given remediationAction.
// sets resolves PolicySet dependencies. root is not modified.
func Build(root *policyv1.Policy, cluster string, action policyv1.RemediationAction, sets dependency.PolicySets) *policyv1.Policy {
	spec := root.Spec.DeepCopy()
	spec.RemediationAction = action
	spec.Dependencies = canonical(spec.Dependencies, root.Namespace, sets)
	for _, tmpl := range spec.PolicyTemplates {
		if tmpl != nil {
			tmpl.ExtraDependencies = canonical(tmpl.ExtraDependencies, root.Namespace, sets)
		}
	}
	return &policyv1.Policy{
		TypeMeta: metav1.TypeMeta{APIVersion: policyv1.GroupVersion.String(), Kind: "Policy"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        Name(root.Namespace, root.Name),
			Namespace:   cluster,
			Labels:      replicaLabels(root, cluster),
			Annotations: replicaAnnotations(root),
		},
		Spec: *spec,
	}
}

// replicaLabels are the labels of root's replica for cluster.
func replicaLabels(root *policyv1.Policy, cluster string) map[string]string {
	labels := copyMetadata(root.Labels, copiesAllMetadata(root))
	labels[LabelClusterName] = cluster
	labels[LabelClusterNamespace] = cluster
	labels[LabelRootPolicy] = Name(root.Namespace, root.Name)
	return labels
}

// replicaAnnotations are the annotations of root's replicas.
func replicaAnnotations(root *policyv1.Policy) map[string]string {
	annotations := copyMetadata(root.Annotations, copiesAllMetadata(root))
	delete(annotations, AnnotationTrigger)
	delete(annotations, AnnotationLastApplied)
	annotations[AnnotationArgoCompare] = argoIgnoreExtraneous
	return annotations
}

func copiesAllMetadata(root *policyv1.Policy) bool {
	return root.Spec.CopyPolicyMetadata == nil || *root.Spec.CopyPolicyMetadata
}

func canonical(deps []policyv1.PolicyDependency, namespace string, sets dependency.PolicySets) []policyv1.PolicyDependency {
	if len(deps) == 0 {
		return deps
	}
	return dependency.Canonicalize(deps, namespace, sets)
}

func copyMetadata(in map[string]string, all bool) map[string]string {
	out := make(map[string]string, len(in)+3)
	for k, v := range in {
		if all || strings.HasPrefix(k, PolicyPrefix) {
			out[k] = v
		}
	}
	return out
}

// Digest is a fingerprint of everything the hub owns in a replica (spec, labels,
// annotations), for comparing a desired replica with a cached one without
// keeping the cached spec. Two replicas with equal digests are not Drifted.
// Keys of maps are sorted by encoding/json, so the digest is stable.
func Digest(p *policyv1.Policy) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	// Encoding these types cannot fail: they hold only strings, maps, slices
	// and already-valid raw JSON.
	_ = enc.Encode(p.Spec)
	_ = enc.Encode(p.Labels)
	_ = enc.Encode(p.Annotations)
	return hex.EncodeToString(h.Sum(nil))
}
