package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	fleetpolicyv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// inputKinds are the kinds whose items plan-rollout reads: its inputs and
// the RolloutPlans it writes.
var inputKinds = []schema.GroupKind{
	{Group: policyv1.GroupVersion.Group, Kind: "Policy"},
	{Group: policyv1beta1.GroupVersion.Group, Kind: "PolicySet"},
	{Group: policyv1.GroupVersion.Group, Kind: "PlacementBinding"},
	{Group: clusterv1beta1.GroupName, Kind: "Placement"},
	{Group: clusterv1beta1.GroupName, Kind: "PlacementDecision"},
	{Group: appsv1.GroupVersion.Group, Kind: binding.KindPlacementRule},
	{Group: clusterv1.GroupName, Kind: "ManagedCluster"},
	{Group: clusterv1beta2.GroupName, Kind: "ManagedClusterSet"},
	{Group: clusterv1beta2.GroupName, Kind: "ManagedClusterSetBinding"},
	{Group: fleetpolicyv1alpha1.GroupVersion.Group, Kind: fleetpolicyv1alpha1.RolloutPlanKind},
}

// objectKey is the namespace and name of an object.
type objectKey struct{ namespace, name string }

func (k objectKey) String() string { return k.namespace + "/" + k.name }

// object is a decoded item.
type object[T any] struct {
	item *fn.KubeObject
	obj  *T
}

// inputs are the items of the ResourceList the plans are made from, decoded,
// and the results found reading them.
type inputs struct {
	policies []object[policyv1.Policy]
	sets     []policyv1beta1.PolicySet
	bindings []object[policyv1.PlacementBinding]
	// bindingsOf are the bindings of each namespace.
	bindingsOf map[string][]policyv1.PlacementBinding
	placements map[objectKey]object[clusterv1beta1.Placement]
	// decisionsOf are the PlacementDecisions of each Placement, by the
	// cluster.open-cluster-management.io/placement label.
	decisionsOf    map[objectKey][]object[clusterv1beta1.PlacementDecision]
	placementRules map[objectKey]object[appsv1.PlacementRule]
	clusters       []clusterv1.ManagedCluster
	// clusterItems are the items of clusters, in the same order.
	clusterItems []*fn.KubeObject
	// clustersWithStatus are clusters with their whole status, decoded once
	// a PlacementRule needs conditions or allocatable resources.
	clustersWithStatus []clusterv1.ManagedCluster
	clusterSets        []clusterv1beta2.ManagedClusterSet
	clusterSetBindings []clusterv1beta2.ManagedClusterSetBinding
	// unplanned are the Policies that got no plan because a placement they
	// are bound through is not in the input (a warning, not an error).
	unplanned map[objectKey]bool

	results fn.Results
}

// read decodes the items plan-rollout reads. Items marked local-config (kpt and
// kustomize function configs, plans) are not input; replicated policies are not
// root policies.
func read(rl *fn.ResourceList) *inputs {
	in := &inputs{
		bindingsOf:     map[string][]policyv1.PlacementBinding{},
		placements:     map[objectKey]object[clusterv1beta1.Placement]{},
		decisionsOf:    map[objectKey][]object[clusterv1beta1.PlacementDecision]{},
		placementRules: map[objectKey]object[appsv1.PlacementRule]{},
		unplanned:      map[objectKey]bool{},
	}
	seenPolicies := map[objectKey]bool{}
	for _, item := range rl.Items {
		if item.IsLocalConfig() {
			continue
		}
		gk := item.GroupKind()
		switch {
		case gk.Group == policyv1.GroupVersion.Group && gk.Kind == "Policy":
			p := decodeInto[policyv1.Policy](in, item)
			if p == nil || replication.IsReplica(p) {
				continue
			}
			key := objectKey{p.Namespace, p.Name}
			if seenPolicies[key] {
				in.results = append(in.results, krm.ObjectResult(item, fn.Error, "metadata.name", "the package holds this Policy twice"))
				continue
			}
			seenPolicies[key] = true
			in.policies = append(in.policies, object[policyv1.Policy]{item, p})
		case gk.Group == policyv1beta1.GroupVersion.Group && gk.Kind == "PolicySet":
			if s := decodeInto[policyv1beta1.PolicySet](in, item); s != nil {
				in.sets = append(in.sets, *s)
				if errs := binding.ValidateExclusions(s); len(errs) > 0 {
					in.reportErrors(item, errs.ToAggregate())
				}
			}
		case gk.Group == policyv1.GroupVersion.Group && gk.Kind == "PlacementBinding":
			if pb := decodeInto[policyv1.PlacementBinding](in, item); pb != nil {
				in.bindings = append(in.bindings, object[policyv1.PlacementBinding]{item, pb})
				in.bindingsOf[pb.Namespace] = append(in.bindingsOf[pb.Namespace], *pb)
			}
		case gk.Group == clusterv1beta1.GroupName && gk.Kind == "Placement":
			if pl := decodeInto[clusterv1beta1.Placement](in, item); pl != nil {
				in.placements[objectKey{pl.Namespace, pl.Name}] = object[clusterv1beta1.Placement]{item, pl}
			}
		case gk.Group == clusterv1beta1.GroupName && gk.Kind == "PlacementDecision":
			if d := decodeInto[clusterv1beta1.PlacementDecision](in, item); d != nil {
				key := objectKey{d.Namespace, d.Labels[clusterv1beta1.PlacementLabel]}
				in.decisionsOf[key] = append(in.decisionsOf[key], object[clusterv1beta1.PlacementDecision]{item, d})
			}
		case gk.Group == appsv1.GroupVersion.Group && gk.Kind == binding.KindPlacementRule:
			if pr := decodeInto[appsv1.PlacementRule](in, item); pr != nil {
				in.placementRules[objectKey{pr.Namespace, pr.Name}] = object[appsv1.PlacementRule]{item, pr}
			}
		case gk.Group == clusterv1.GroupName && gk.Kind == "ManagedCluster":
			if c := in.readCluster(item); c != nil {
				in.clusters = append(in.clusters, *c)
				in.clusterItems = append(in.clusterItems, item)
			}
		case gk.Group == clusterv1beta2.GroupName && gk.Kind == "ManagedClusterSet":
			if s := decodeInto[clusterv1beta2.ManagedClusterSet](in, item); s != nil {
				in.clusterSets = append(in.clusterSets, *s)
			}
		case gk.Group == clusterv1beta2.GroupName && gk.Kind == "ManagedClusterSetBinding":
			if b := decodeInto[clusterv1beta2.ManagedClusterSetBinding](in, item); b != nil {
				in.clusterSetBindings = append(in.clusterSetBindings, *b)
			}
		}
	}
	return in
}

// decodeInto decodes item as a T, or reports why it cannot and returns nil.
func decodeInto[T any](in *inputs, item *fn.KubeObject) *T {
	obj := new(T)
	if err := krm.Decode(item, obj); err != nil {
		in.results = append(in.results, krm.Unreadable(item, err))
		return nil
	}
	return obj
}

// readCluster reads the fields of a ManagedCluster the offline scheduler uses:
// name, labels, deletionTimestamp, spec.taints and status.clusterClaims. A hub
// export carries much more (conditions, capacity, versions), and decoding whole
// objects would dominate the time to plan 10,000 clusters. It reports a field
// it cannot read and returns nil.
func (in *inputs) readCluster(item *fn.KubeObject) *clusterv1.ManagedCluster {
	fail := func(path *field.Path, err error) *clusterv1.ManagedCluster {
		in.results = append(in.results, krm.Unreadable(item, field.TypeInvalid(path, field.OmitValueType{}, err.Error())))
		return nil
	}
	c := &clusterv1.ManagedCluster{}
	c.Name = item.GetName()
	labels, _, err := item.NestedStringMap("metadata", "labels")
	if err != nil {
		return fail(field.NewPath("metadata", "labels"), err)
	}
	c.Labels = labels
	if deleted, found, err := item.NestedString("metadata", "deletionTimestamp"); err != nil {
		return fail(field.NewPath("metadata", "deletionTimestamp"), err)
	} else if found {
		c.DeletionTimestamp = &metav1.Time{}
		if err := c.DeletionTimestamp.UnmarshalQueryParameter(deleted); err != nil {
			return fail(field.NewPath("metadata", "deletionTimestamp"), err)
		}
	}
	taints, _, err := item.NestedSlice("spec", "taints")
	if err != nil {
		return fail(field.NewPath("spec", "taints"), err)
	}
	for i, t := range taints {
		var taint clusterv1.Taint
		if err := t.As(&taint); err != nil {
			return fail(field.NewPath("spec", "taints").Index(i), err)
		}
		c.Spec.Taints = append(c.Spec.Taints, taint)
	}
	claims, _, err := item.NestedSlice("status", "clusterClaims")
	if err != nil {
		return fail(field.NewPath("status", "clusterClaims"), err)
	}
	for i, cl := range claims {
		var claim clusterv1.ManagedClusterClaim
		if err := cl.As(&claim); err != nil {
			return fail(field.NewPath("status", "clusterClaims").Index(i), err)
		}
		c.Status.ClusterClaims = append(c.Status.ClusterClaims, claim)
	}
	return c
}

// clustersAndStatus returns the ManagedClusters with their whole status
// (conditions, allocatable resources), which readCluster leaves out for speed:
// decoded on the first call, for a PlacementRule that selects by them. A
// status that cannot be read is reported and its cluster left out.
func (in *inputs) clustersAndStatus() []clusterv1.ManagedCluster {
	if in.clustersWithStatus != nil {
		return in.clustersWithStatus
	}
	in.clustersWithStatus = make([]clusterv1.ManagedCluster, 0, len(in.clusters))
	for i, item := range in.clusterItems {
		c := in.clusters[i]
		status, found, err := item.NestedSubObject("status")
		if err == nil && found {
			err = status.As(&c.Status)
		}
		if err != nil {
			in.results = append(in.results, krm.Unreadable(item, field.TypeInvalid(field.NewPath("status"), field.OmitValueType{}, err.Error())))
			continue
		}
		in.clustersWithStatus = append(in.clustersWithStatus, c)
	}
	return in.clustersWithStatus
}

// isRolloutPlan reports whether item is a RolloutPlan, this function's output.
func isRolloutPlan(item *fn.KubeObject) bool {
	gk := item.GroupKind()
	return gk.Group == fleetpolicyv1alpha1.GroupVersion.Group && gk.Kind == fleetpolicyv1alpha1.RolloutPlanKind
}

// selectPolicies returns the Policies to plan: every Policy, or those filter
// names ("name" or "namespace/name"), each of which must name one.
func (in *inputs) selectPolicies(filter []string) ([]object[policyv1.Policy], field.ErrorList) {
	if len(filter) == 0 {
		return in.policies, nil
	}
	return krm.SelectNamed(in.policies, func(p object[policyv1.Policy]) (string, string) {
		return p.obj.Namespace, p.obj.Name
	}, field.NewPath("policies"), filter)
}

// checkBindings reports the PlacementBindings an OCM hub would ignore or that
// cannot be resolved: a placementRef pairing a kind with the wrong API group, an
// override that does not normalise. A placement that is not in the input is a
// warning (missingPlacement): the package may bind to one that exists on the
// hub only.
func (in *inputs) checkBindings(selected []object[policyv1.Policy]) {
	for _, b := range in.bindings {
		pb := b.obj
		ref, readByOCM := binding.RefOf(pb)
		for i, s := range pb.Subjects {
			if templates.IsTemplated(s.Name) {
				in.results = append(in.results, krm.ObjectResult(b.item, fn.Warning, fmt.Sprintf("subjects[%d].name", i),
					fmt.Sprintf("%q is templated, but OCM resolves templates only inside policy-templates[].objectDefinition: "+
						"this subject binds nothing", s.Name)))
			}
		}
		switch {
		case templates.IsTemplated(ref.Name):
			in.results = append(in.results, krm.ObjectResult(b.item, fn.Error, "placementRef.name",
				fmt.Sprintf("%q is templated, but OCM resolves templates only inside policy-templates[].objectDefinition: "+
					"the binding names a placement that cannot exist", ref.Name)))
		case !readByOCM:
			in.results = append(in.results, krm.ObjectResult(b.item, fn.Warning, "placementRef",
				fmt.Sprintf("kind %q with apiGroup %q: OCM ignores this binding (Placement goes with %s, PlacementRule with %s)",
					ref.Kind, pb.PlacementRef.APIGroup, clusterv1beta1.GroupName, appsv1.GroupVersion.Group)))
		case ref.Name == "":
			in.results = append(in.results, krm.ObjectResult(b.item, fn.Error, "placementRef.name", "empty: the binding names no placement"))
		case !in.holds(pb.Namespace, ref):
			in.results = append(in.results, in.missingPlacement(b, ref, selected))
		}
		_, errs := binding.Normalize(pb)
		in.results = append(in.results, krm.FieldResults(b.item, fn.Error, errs)...)
	}
}

// holds reports whether the input holds the placement ref of namespace.
func (in *inputs) holds(namespace string, ref binding.PlacementRef) bool {
	key := objectKey{namespace, ref.Name}
	if ref.Kind == binding.KindPlacement {
		_, found := in.placements[key]
		return found
	}
	_, found := in.placementRules[key]
	return found
}

// missingPlacement is the warning on binding b, whose placement ref is not in
// the input: a placement the package expects on the hub, as PolicyGenerator
// writes for placement.placementName (placementRuleName). Its clusters are not
// known, so the selected Policies b binds (directly or through a PolicySet)
// get no plan (planner.plan), but for disabled ones, which are bound to no
// cluster whatever it selects. The other Policies are planned.
func (in *inputs) missingPlacement(b object[policyv1.PlacementBinding], ref binding.PlacementRef, selected []object[policyv1.Policy]) *fn.Result {
	var unplanned []string
	only := []policyv1.PlacementBinding{*b.obj}
	for _, p := range selected {
		if !p.obj.Spec.Disabled && slices.Contains(binding.Placements(p.obj, in.sets, only), ref) {
			unplanned = append(unplanned, p.obj.Namespace+"/"+p.obj.Name)
		}
	}
	generatorField, decisions := "placementName", "PlacementDecisions"
	if ref.Kind == binding.KindPlacementRule {
		generatorField, decisions = "placementRuleName", "status.decisions"
	}
	msg := fmt.Sprintf("%s %s/%s is not in the input (a placement on the hub only, as PolicyGenerator's placement.%s binds to)",
		ref.Kind, b.obj.Namespace, ref.Name, generatorField)
	if len(unplanned) == 0 {
		return krm.ObjectResult(b.item, fn.Warning, "placementRef.name", msg+": no Policy planned here is bound through it")
	}
	subject, verb, pronoun := "Policy", "gets", "it"
	if len(unplanned) > 1 {
		subject, verb, pronoun = "Policies", "get", "them"
	}
	msg += fmt.Sprintf(": the clusters it selects are unknown, so %s %s %s no RolloutPlan; to plan %s, add the %s with its %s exported from the hub, or with ManagedClusters to schedule it on",
		subject, strings.Join(unplanned, ", "), verb, pronoun, ref.Kind, decisions)
	return krm.ObjectResult(b.item, fn.Warning, "placementRef.name", msg)
}
