package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// checkForOLM reports what keeps an OperatorPolicy from being expressed as OLM
// objects that nothing but GitOps applies: there is no controller to only
// report, to remove, or to pick a catalog.
func checkForOLM(item *fn.KubeObject, op *v1beta1.OperatorPolicy) fn.Results {
	var results fn.Results
	fail := func(field, message string) {
		results = append(results, krm.ObjectResult(item, fn.Error, field, message))
	}
	if action := op.Spec.RemediationAction; action == "" || action.IsInform() {
		fail("spec.remediationAction", "is inform, but mode olm makes the objects an enforcing policy creates and "+
			"GitOps applies them; only the spoke controller can merely report: set enforce, or use mode policy")
	}
	if strings.EqualFold(string(op.Spec.ComplianceType), string(policyv1.MustNotHave)) {
		fail("spec.complianceType", "is mustnothave, which removes the operator; OLM objects applied by GitOps "+
			"cannot say that: delete the OperatorPolicy from the package, or use mode policy")
	}
	for _, f := range operatorpolicy.ClusterDefaultedFields(&op.Spec.Subscription) {
		if why, required := requiredWithoutSpoke[f]; required {
			results = append(results, krm.FieldResult(item, fn.Error,
				field.Required(f.Path(), "in mode olm: without the spoke controller nothing "+why)))
		}
	}
	return results
}

// requiredWithoutSpoke says, for each subscription field the managed cluster
// fills in (operatorpolicy.ClusterDefaultedFields), what would be missing
// without the spoke controller; the channel is not there: OLM defaults it to
// the package's default channel.
var requiredWithoutSpoke = map[operatorpolicy.SubscriptionField]string{
	operatorpolicy.SubscriptionNamespace:       "defaults it from the operator's PackageManifest or a default namespace",
	operatorpolicy.SubscriptionSource:          "picks the catalog from the operator's PackageManifest",
	operatorpolicy.SubscriptionSourceNamespace: "picks the catalog from the operator's PackageManifest",
}

// expandOLM replaces each OperatorPolicy by the OperatorGroup (when one is
// needed) and the Subscription that the spoke controller would create for it.
// The cluster's OperatorGroups are unknown: the ones of the package are taken
// to be all there are. Policies that name an OperatorGroup are served first,
// so that a policy that names none uses theirs rather than making a second
// one in the namespace.
func expandOLM(out *output, sources []*source) {
	existing := map[string][]operatorsv1.OperatorGroup{} // by namespace
	has := func(namespace, name string) bool {
		return slices.ContainsFunc(existing[namespace], func(og operatorsv1.OperatorGroup) bool { return og.Name == name })
	}
	for _, item := range out.pkg.items {
		gk := item.GroupKind()
		isOperatorGroup := gk.Group == operatorsv1.GroupVersion.Group && gk.Kind == operatorsv1.OperatorGroupKind && !item.IsLocalConfig()
		if isOperatorGroup && !has(item.GetNamespace(), item.GetName()) {
			og := operatorsv1.OperatorGroup{}
			og.Name, og.Namespace = item.GetName(), item.GetNamespace()
			existing[og.Namespace] = append(existing[og.Namespace], og)
		}
	}

	wants := map[*source][]string{}
	namingFirst := slices.Clone(sources)
	namesNone := func(s *source) int {
		if s.policy.OperatorGroup == nil {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(namingFirst, func(a, b *source) int { return namesNone(a) - namesNone(b) })
	for _, s := range namingFirst {
		og, err := operatorpolicy.DesiredOperatorGroup(s.policy, existing[s.policy.Subscription.Namespace], nil)
		if err != nil {
			out.fail(s, "spec.operatorGroup", conflictDetail(err))
			continue
		}
		if og == nil {
			continue
		}
		obj, err := newObject(og)
		if err != nil {
			out.fail(s, "spec.operatorGroup", err.Error())
			continue
		}
		if out.place(s, "spec.operatorGroup", obj) {
			wants[s] = append(wants[s], idOf(obj).String())
			if !has(og.Namespace, og.Name) {
				existing[og.Namespace] = append(existing[og.Namespace], *og)
			}
		}
	}

	for _, s := range sources {
		sub := operatorpolicy.DesiredSubscription(s.policy)
		obj, err := newObject(sub)
		if err != nil {
			out.fail(s, "spec.subscription", err.Error())
			continue
		}
		if !out.place(s, "spec.subscription", obj) {
			continue
		}
		wants[s] = append(wants[s], idOf(obj).String())
		if sub.Spec.InstallPlanApproval == operatorsv1alpha1.ApprovalManual && s.policy.Approval == operatorsv1alpha1.ApprovalAutomatic {
			out.report(s, fn.Warning, allowedField(s.op), fmt.Sprintf(
				"restricts the CSVs, so the Subscription's installPlanApproval is Manual; without the spoke controller "+
					"nothing approves its InstallPlans: approve the one for %s yourself, or allow \"*\"",
				strings.Join(s.policy.Allowed.Names, " or ")))
		}
		out.report(s, fn.Info, "", "expanded into "+strings.Join(wants[s], " and "))
	}
	for _, s := range sources {
		if objects := out.objects[s.item]; len(objects) > 0 {
			objects[0] = withLeadingComment(objects[0], leadingComment(s.item))
		}
	}
}

// leadingComment is the comment written above an item, "" when there is none.
func leadingComment(item *fn.KubeObject) string {
	root := krm.Node(item)
	if root.HeadComment != "" || len(root.Content) == 0 {
		return root.HeadComment
	}
	return root.Content[0].HeadComment
}

// withLeadingComment returns obj, an object made by newObject, with comment
// above it: the comments written above an OperatorPolicy stay in the file.
func withLeadingComment(obj *fn.KubeObject, comment string) *fn.KubeObject {
	if comment == "" {
		return obj
	}
	node := obj.MoveToResourceNode()
	node.YNode().Content[0].HeadComment = comment
	return fn.MoveToKubeObject(node)
}

// conflictDetail is the message of an OperatorGroup conflict, without the
// policy and field, which the result names.
func conflictDetail(err error) string {
	var conflict *operatorpolicy.OperatorGroupConflict
	if errors.As(err, &conflict) {
		return conflict.Detail
	}
	return err.Error()
}

// allowedField is the field that restricts the CSVs of op: fleetpolicy's
// allowedCSVs or OCM's versions.
func allowedField(op *v1beta1.OperatorPolicy) string {
	if op.Spec.AllowedCSVs != nil {
		return "spec.allowedCSVs"
	}
	return "spec.versions"
}
