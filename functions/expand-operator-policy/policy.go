package main

import (
	"fmt"
	"slices"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// bindingPrefix starts the name of the PlacementBinding of each Policy, as
// OCM's policy generator names them.
const bindingPrefix = "binding-"

// wrapInPolicies replaces each OperatorPolicy by a root Policy, named and
// namespaced as the OperatorPolicy was, whose only template is the
// OperatorPolicy; with a placement in the config, also by a PlacementBinding
// "binding-<policy>" that binds the Policy to it, and by the Placement itself
// in each namespace it is first needed in.
func wrapInPolicies(out *output, sources []*source, cfg Config) {
	var ref *policyv1.PlacementSubject
	switch {
	case cfg.Placement != nil:
		written := binding.PlacementRef{Kind: binding.KindPlacement, Name: cfg.Placement.Name}.PlacementSubject()
		ref = &written
	case cfg.PlacementRef != nil:
		written := binding.PlacementRef{Kind: cfg.PlacementRef.Kind, Name: cfg.PlacementRef.Name}.PlacementSubject()
		ref = &written
	}
	for _, s := range sources {
		policy, err := rootPolicy(s)
		if err != nil {
			out.fail(s, "", err.Error())
			continue
		}
		if !out.place(s, "metadata.name", policy) {
			continue
		}
		message := "wrapped in " + idOf(policy).String()
		if cfg.Placement != nil {
			placement, err := newPlacement(cfg.Placement, s.op.Namespace)
			if err != nil {
				out.fail(s, "", err.Error())
				continue
			}
			if !out.place(s, "", placement) {
				continue
			}
		}
		if ref != nil {
			pb, err := newObject(&policyv1.PlacementBinding{
				TypeMeta:     typeMeta(policyv1.GroupVersion.String(), "PlacementBinding"),
				ObjectMeta:   objectMeta(bindingPrefix+s.op.Name, s.op.Namespace),
				PlacementRef: *ref,
				Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: binding.KindPolicy, Name: s.op.Name}},
			}, []string{"bindingOverrides"})
			if err != nil {
				out.fail(s, "", err.Error())
				continue
			}
			if !out.place(s, "metadata.name", pb) {
				continue
			}
			message += fmt.Sprintf(", bound to %s %s by %s", ref.Kind, ref.Name, idOf(pb).nameRef())
		} else {
			message += "; no placement is configured, so it is bound to no cluster until a PlacementBinding binds it"
		}
		out.report(s, fn.Info, "", message)
	}
}

// rootPolicy is the root Policy that delivers the OperatorPolicy of s: enabled,
// with the OperatorPolicy's remediationAction (inform when it has none, as the
// OperatorPolicy CRD defaults it), and the OperatorPolicy as its template,
// comments included, without its namespace (a template lives in the cluster's
// namespace), its status and the orchestrators' annotations.
func rootPolicy(s *source) (*fn.KubeObject, error) {
	action := policyv1.RemediationAction(s.op.Spec.RemediationAction)
	switch {
	case s.templatedAction:
		action = "" // the template's, resolved by the hub or the managed cluster, decides
	case action == "" || s.op.Spec.RemediationAction.IsInformOnly():
		action = "inform" // a Policy cannot say InformOnly; its template keeps it
	}
	node, err := newNode(&policyv1.Policy{
		TypeMeta:   typeMeta(policyv1.GroupVersion.String(), "Policy"),
		ObjectMeta: objectMeta(s.op.Name, s.op.Namespace),
		Spec: policyv1.PolicySpec{
			RemediationAction: action,
			PolicyTemplates:   []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte("{}")}}},
		},
	})
	if err != nil {
		return nil, err
	}
	template := s.item.CopyToResourceNode()
	if err := template.PipeE(yaml.Clear("status")); err != nil {
		return nil, err
	}
	if err := template.PipeE(yaml.Lookup("metadata"), yaml.Clear("namespace")); err != nil {
		return nil, err
	}
	for key := range template.GetAnnotations() {
		if krm.IsOrchestratorAnnotation(key) {
			if err := template.PipeE(yaml.ClearAnnotation(key)); err != nil {
				return nil, err
			}
		}
	}
	if err := yaml.ClearEmptyAnnotations(template); err != nil {
		return nil, err
	}
	if err := node.PipeE(yaml.Lookup("spec", "policy-templates", "0"), yaml.SetField("objectDefinition", template)); err != nil {
		return nil, err
	}
	return fn.MoveToKubeObject(node), nil
}

// newPlacement is the Placement of the config in namespace.
func newPlacement(p *Placement, namespace string) (*fn.KubeObject, error) {
	spec := clusterv1beta1.PlacementSpec{ClusterSets: p.ClusterSets}
	unset := [][]string{{"spec", "prioritizerPolicy"}, {"spec", "spreadPolicy"}, {"spec", "decisionStrategy"}}
	if p.LabelSelector != nil {
		spec.Predicates = []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: *p.LabelSelector},
		}}
		selector := []string{"spec", "predicates", "0", "requiredClusterSelector"}
		unset = append(unset, slices.Concat(selector, []string{"claimSelector"}), slices.Concat(selector, []string{"celSelector"}))
	}
	return newObject(&clusterv1beta1.Placement{
		TypeMeta:   typeMeta(clusterv1beta1.GroupVersion.String(), binding.KindPlacement),
		ObjectMeta: objectMeta(p.Name, namespace),
		Spec:       spec,
	}, unset...)
}
