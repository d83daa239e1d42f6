package spoke_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// pruningTemplate is a ConfigurationPolicy template named name with the
// remediationAction action and pruneObjectBehavior prune ("" for none), whose
// musthave object templates want the ConfigMaps cms of namespace data.
func pruningTemplate(name, action, prune, data string, cms ...string) string {
	var templates []string
	for _, cm := range cms {
		templates = append(templates, fmt.Sprintf(`{complianceType: musthave,
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {owner: fleetpolicy}}}`, cm, data))
	}
	pruneField := ""
	if prune != "" {
		pruneField = ", pruneObjectBehavior: " + prune
	}
	return fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: %s},
        spec: {remediationAction: %s%s, object-templates: [%s]}}`, name, action, pruneField, strings.Join(templates, ", "))
}

// cmUID is the uid of ConfigMap data/name on the spoke ("" if there is none).
func cmUID(t *testing.T, data, name string) types.UID {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name}}
	if !exists(t, spokeC, cm) {
		return ""
	}
	return cm.UID
}

// hasPruneFinalizer reports whether the spoke's ConfigurationPolicy name holds
// the prune finalizer.
func hasPruneFinalizer(t *testing.T, name string) bool {
	t.Helper()
	cp := spokeConfigPolicy(t, name)
	return cp != nil && controllerutil.ContainsFinalizer(cp, configpolicy.PruneFinalizer)
}

// deleteRoot deletes root policy ns/name on the hub and waits until its
// template is gone from the spoke (the prune finalizer released).
func deleteRoot(t *testing.T, ns, name, template string) {
	t.Helper()
	if err := hubC.Delete(context.Background(), &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "the template goes with its policy", func() string {
		if cp := spokeConfigPolicy(t, template); cp != nil {
			return fmt.Sprintf("%s is still there, finalizers %v, status %+v", template, cp.Finalizers, cp.Status.CompliancyDetails)
		}
		return ""
	})
}

// compliantRoot creates namespace data on the spoke and root policy ns/p with
// the one template on the hub, binds it to the cluster and waits until it is
// Compliant.
func compliantRoot(t *testing.T, ns, data, template string) {
	t.Helper()
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, policyOf(ns, "p", template, ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.Compliant})
}

// settle waits for the spoke's ConfigurationPolicies to have been evaluated
// again after a change (they are evaluated by watch), so that a status an
// evaluation would change has been written.
func settle() { time.Sleep(1500 * time.Millisecond) }

// TestPruneDeleteIfCreated: an enforced ConfigurationPolicy with
// DeleteIfCreated holds the prune finalizer and, when its policy is deleted,
// deletes the ConfigMap it created and keeps the one that was there before.
func TestPruneDeleteIfCreated(t *testing.T) {
	const ns, data = "prune-created", "prune-created-data"
	configMap(t, data, "before")
	compliantRoot(t, ns, data, pruningTemplate("pc-cm", "enforce", "DeleteIfCreated", data, "made", "before"))
	if !hasPruneFinalizer(t, "pc-cm") {
		t.Fatal("the ConfigurationPolicy does not hold the prune finalizer")
	}
	settle()
	cp := spokeConfigPolicy(t, "pc-cm")
	for _, ro := range cp.Status.RelatedObjects {
		created := ro.Properties != nil && ro.Properties.CreatedByPolicy != nil && *ro.Properties.CreatedByPolicy
		if want := ro.Object.Metadata.Name == "made"; created != want {
			t.Errorf("%s: createdByPolicy %t after later evaluations, want %t", ro.Object.Metadata.Name, created, want)
		}
	}

	deleteRoot(t, ns, "p", "pc-cm")
	if cmUID(t, data, "made") != "" {
		t.Error("the ConfigMap the policy created was not deleted")
	}
	if cmUID(t, data, "before") == "" {
		t.Error("the ConfigMap that was there before the policy was deleted")
	}
}

// TestPruneDeleteAll: DeleteAll deletes what the policy created and what it
// found.
func TestPruneDeleteAll(t *testing.T) {
	const ns, data = "prune-all", "prune-all-data"
	configMap(t, data, "before")
	compliantRoot(t, ns, data, pruningTemplate("pa-cm", "enforce", "DeleteAll", data, "made", "before"))
	if !hasPruneFinalizer(t, "pa-cm") {
		t.Fatal("the ConfigurationPolicy does not hold the prune finalizer")
	}

	deleteRoot(t, ns, "p", "pa-cm")
	for _, name := range []string{"made", "before"} {
		if cmUID(t, data, name) != "" {
			t.Errorf("ConfigMap %s was not deleted", name)
		}
	}
}

// TestPruneNoneDeletesNothing: without pruneObjectBehavior, or with None, no
// finalizer is held and deleting the policy deletes nothing; switching to
// DeleteIfCreated adds the finalizer and switching back takes it away.
func TestPruneNoneDeletesNothing(t *testing.T) {
	const ns, data = "prune-none", "prune-none-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, policyOf(ns, "unset", pruningTemplate("pn-unset", "enforce", "", data, "unset"), "")+"---"+
		policyOf(ns, "none", pruningTemplate("pn-none", "enforce", "None", data, "none"), ""))
	bindToCluster(t, ns, "unset", "none")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"unset": policyv1.Compliant, "none": policyv1.Compliant})
	settle()
	if hasPruneFinalizer(t, "pn-unset") || hasPruneFinalizer(t, "pn-none") {
		t.Fatal("a ConfigurationPolicy that prunes nothing holds the prune finalizer")
	}

	testkit.Apply(t, hubC, policyOf(ns, "none", pruningTemplate("pn-none", "enforce", "DeleteIfCreated", data, "none"), ""))
	testkit.Eventually(t, 45*time.Second, "the finalizer follows the spec", func() string {
		if !hasPruneFinalizer(t, "pn-none") {
			return "no finalizer with DeleteIfCreated"
		}
		return ""
	})
	testkit.Apply(t, hubC, policyOf(ns, "none", pruningTemplate("pn-none", "enforce", "None", data, "none"), ""))
	testkit.Eventually(t, 45*time.Second, "the finalizer follows the spec", func() string {
		if hasPruneFinalizer(t, "pn-none") {
			return "the finalizer stays with None"
		}
		return ""
	})

	deleteRoot(t, ns, "unset", "pn-unset")
	deleteRoot(t, ns, "none", "pn-none")
	for _, name := range []string{"unset", "none"} {
		if cmUID(t, data, name) == "" {
			t.Errorf("ConfigMap %s was deleted by a policy that prunes nothing", name)
		}
	}
}

// TestPruneInformDeletesNothing: an inform policy with DeleteAll holds the
// finalizer, as in OCM, but deleting it deletes nothing.
func TestPruneInformDeletesNothing(t *testing.T) {
	const ns, data = "prune-inform", "prune-inform-data"
	configMap(t, data, "seen")
	compliantRoot(t, ns, data, pruningTemplate("pi-cm", "inform", "DeleteAll", data, "seen"))
	if !hasPruneFinalizer(t, "pi-cm") {
		t.Fatal("the ConfigurationPolicy does not hold the prune finalizer")
	}
	deleteRoot(t, ns, "p", "pi-cm")
	if cmUID(t, data, "seen") == "" {
		t.Error("an inform policy deleted the ConfigMap it checked")
	}
}

// TestPruneKeepsObjectRecreatedBySomeoneElse: the ConfigMap a DeleteIfCreated
// policy created is deleted and recreated by someone else before the policy
// sees it missing; the policy keeps the uid it created, so deleting the policy
// leaves the new ConfigMap alone. The policy is evaluated every second rather
// than by watch, which would see the ConfigMap missing at once.
func TestPruneKeepsObjectRecreatedBySomeoneElse(t *testing.T) {
	const ns, data = "prune-recreated", "prune-recreated-data"
	compliantRoot(t, ns, data, strings.Replace(pruningTemplate("pr-cm", "enforce", "DeleteIfCreated", data, "cm"),
		"spec: {", "spec: {evaluationInterval: {compliant: 1s, noncompliant: 1s}, ", 1))
	created := cmUID(t, data, "cm")

	// Replace it at once; when the policy recreated it in between, try again.
	var theirs types.UID
	for attempt := 0; theirs == ""; attempt++ {
		if attempt == 20 {
			t.Fatal("the policy recreated the ConfigMap before the test could, every time")
		}
		deleteConfigMap(t, data, "cm")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "cm"}, Data: map[string]string{"owner": "fleetpolicy"}}
		switch err := spokeC.Create(context.Background(), cm); {
		case err == nil:
			theirs = cm.UID
		case !apierrors.IsAlreadyExists(err):
			t.Fatal(err)
		}
	}
	settle()
	cp := spokeConfigPolicy(t, "pr-cm")
	if len(cp.Status.RelatedObjects) != 1 || cp.Status.RelatedObjects[0].Properties == nil ||
		cp.Status.RelatedObjects[0].Properties.UID == string(theirs) {
		t.Fatalf("the status does not keep the uid the policy created (%s, theirs %s): %+v", created, theirs, cp.Status.RelatedObjects)
	}

	deleteRoot(t, ns, "p", "pr-cm")
	if got := cmUID(t, data, "cm"); got != theirs {
		t.Errorf("the ConfigMap recreated by someone else was deleted (uid now %q, theirs %q)", got, theirs)
	}
}

// TestPruneFailureHoldsFinalizer: a ConfigMap that cannot go (a finalizer of
// someone else holds it) keeps the ConfigurationPolicy's finalizer, and its
// status says which object could not be deleted; once it goes, so does the
// policy.
func TestPruneFailureHoldsFinalizer(t *testing.T) {
	const ns, data, hold = "prune-failure", "prune-failure-data", "fleetpolicy.test/hold"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	held := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "held", Finalizers: []string{hold}},
		Data:       map[string]string{"owner": "fleetpolicy"},
	}
	if err := spokeC.Create(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	compliantRoot(t, ns, data, pruningTemplate("pf-cm", "enforce", "DeleteAll", data, "held"))
	if err := hubC.Delete(context.Background(), &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}); err != nil {
		t.Fatal(err)
	}

	testkit.Eventually(t, 45*time.Second, "the failure is reported and the finalizer kept", func() string {
		cp := spokeConfigPolicy(t, "pf-cm")
		if cp == nil {
			return "the ConfigurationPolicy is gone"
		}
		if cp.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(cp, configpolicy.PruneFinalizer) {
			return fmt.Sprintf("not held while deleting: deletionTimestamp %v, finalizers %v", cp.DeletionTimestamp, cp.Finalizers)
		}
		for _, d := range cp.Status.CompliancyDetails {
			for _, c := range d.Conditions {
				if c.Reason == configpolicy.ReasonCleanupError && strings.Contains(c.Message, `ConfigMap "held" in namespace `+data) {
					return ""
				}
			}
		}
		return fmt.Sprintf("no cleanup error in the status: %+v", cp.Status.CompliancyDetails)
	})
	if cp := spokeConfigPolicy(t, "pf-cm"); cp.Status.ComplianceState != policyv1.NonCompliant {
		t.Errorf("compliance %q while the cleanup fails, want NonCompliant", cp.Status.ComplianceState)
	}

	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := spokeC.Get(context.Background(), client.ObjectKeyFromObject(held), cm); err != nil {
			return err
		}
		cm.Finalizers = slices.DeleteFunc(cm.Finalizers, func(f string) bool { return f == hold })
		return spokeC.Update(context.Background(), cm)
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "the policy goes once the ConfigMap has", func() string {
		if spokeConfigPolicy(t, "pf-cm") != nil {
			return "the ConfigurationPolicy is still there"
		}
		return ""
	})
	if cmUID(t, data, "held") != "" {
		t.Error("the ConfigMap is still there")
	}
}

// TestPruneDroppedObject: when the spec stops naming an object a
// DeleteIfCreated policy created, the policy deletes it, as OCM does.
func TestPruneDroppedObject(t *testing.T) {
	const ns, data = "prune-dropped", "prune-dropped-data"
	compliantRoot(t, ns, data, pruningTemplate("pd-cm", "enforce", "DeleteIfCreated", data, "first"))
	testkit.Apply(t, hubC, policyOf(ns, "p", pruningTemplate("pd-cm", "enforce", "DeleteIfCreated", data, "second"), ""))
	testkit.Eventually(t, 45*time.Second, "the dropped ConfigMap is deleted", func() string {
		if cmUID(t, data, "second") == "" {
			return "second not created"
		}
		if cmUID(t, data, "first") != "" {
			return "first still there"
		}
		return ""
	})
	deleteRoot(t, ns, "p", "pd-cm")
	if cmUID(t, data, "second") != "" {
		t.Error("the ConfigMap the policy created was not deleted")
	}
}

// TestPruneWhenDependencyRegresses: objects created on the cluster because a
// dependency was met are deleted once it no longer is, which follows from
// pruning: the dependent template turns Pending and is deleted, and with
// DeleteIfCreated its ConfigMap goes; when the dependency is met again, it
// comes back.
func TestPruneWhenDependencyRegresses(t *testing.T) {
	const ns, data = "prune-dependency", "prune-dependency-data"
	configMap(t, data, "gate")
	testkit.Apply(t, hubC, policyOf(ns, "gate", configPolicy("pg-gate", "inform", "musthave", data, "gate"), "")+"---"+
		policyOf(ns, "app", pruningTemplate("pg-app", "enforce", "DeleteIfCreated", data, "app"), dependsOn("gate", policyv1.Compliant)))
	bindToCluster(t, ns, "gate", "app")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"gate": policyv1.Compliant, "app": policyv1.Compliant})
	if cmUID(t, data, "app") == "" {
		t.Fatal("the dependent policy did not create its ConfigMap")
	}

	deleteConfigMap(t, data, "gate")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"gate": policyv1.NonCompliant, "app": policyv1.Pending})
	testkit.Eventually(t, 45*time.Second, "the Pending template's ConfigMap is deleted", func() string {
		if spokeConfigPolicy(t, "pg-app") != nil {
			return "the template is still there"
		}
		if cmUID(t, data, "app") != "" {
			return "the ConfigMap is still there"
		}
		return ""
	})

	configMap(t, data, "gate")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"gate": policyv1.Compliant, "app": policyv1.Compliant})
	if cmUID(t, data, "app") == "" {
		t.Error("the ConfigMap did not come back with its template")
	}
}

// TestPruneLeavesMustNotHaveObjects: a mustnothave object is never the
// policy's to prune. An enforced DeleteAll policy that evaluates only once
// deletes ConfigMap "unwanted"; someone recreates it; deleting the policy
// leaves it alone, and deletes the musthave ConfigMap it created.
func TestPruneLeavesMustNotHaveObjects(t *testing.T) {
	const ns, data = "prune-mustnothave", "prune-mustnothave-data"
	configMap(t, data, "unwanted")
	template := fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: pm-cm},
        spec: {remediationAction: enforce, pruneObjectBehavior: DeleteAll, evaluationInterval: {compliant: never, noncompliant: never},
          object-templates: [
            {complianceType: mustnothave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: unwanted, namespace: %[1]s}}},
            {complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: wanted, namespace: %[1]s}}}]}}`, data)
	compliantRoot(t, ns, data, template)
	if cmUID(t, data, "unwanted") != "" || cmUID(t, data, "wanted") == "" {
		t.Fatal("the policy did not enforce its templates")
	}
	configMap(t, data, "unwanted")

	deleteRoot(t, ns, "p", "pm-cm")
	if cmUID(t, data, "unwanted") == "" {
		t.Error("pruning deleted an object of a mustnothave template")
	}
	if cmUID(t, data, "wanted") != "" {
		t.Error("pruning did not delete the musthave object")
	}
}

// TestPruneNamespaceLeavingSelector: a namespace leaving a DeleteIfCreated
// policy's namespaceSelector takes the ConfigMap the policy created there
// with it, also when it was the last namespace selected (OCM prunes both).
func TestPruneNamespaceLeavingSelector(t *testing.T) {
	const ns, label = "prune-selector", "fleetpolicy.test/prune-selector"
	namespaces := []string{"prune-selector-a", "prune-selector-b"}
	setLabel := func(name, value string) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n := &corev1.Namespace{}
			if err := spokeC.Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
				return err
			}
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[label] = value
			return spokeC.Update(context.Background(), n)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range namespaces {
		if err := localplane.EnsureNamespace(context.Background(), spokeC, n); err != nil {
			t.Fatal(err)
		}
		setLabel(n, "yes")
	}
	template := fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: ps-cm},
        spec: {remediationAction: enforce, pruneObjectBehavior: DeleteIfCreated, namespaceSelector: {matchLabels: {%s: "yes"}},
          object-templates: [{complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: selected}}}]}}`, label)
	compliantRoot(t, ns, namespaces[0], template)
	for _, n := range namespaces {
		if cmUID(t, n, "selected") == "" {
			t.Fatalf("no ConfigMap created in %s", n)
		}
	}

	for i, n := range []string{namespaces[1], namespaces[0]} {
		setLabel(n, "no")
		testkit.Eventually(t, 45*time.Second, "the ConfigMap of the namespace that left is deleted", func() string {
			if cmUID(t, n, "selected") != "" {
				return "still there in " + n
			}
			return ""
		})
		if i == 0 && cmUID(t, namespaces[0], "selected") == "" {
			t.Fatal("the ConfigMap of the namespace still selected was deleted")
		}
	}
}

// TestPruneSkippedWhenATemplateFails: an evaluation in which an object
// template cannot be resolved no longer relates to that template's object,
// yet it prunes nothing: a failure is no reason to delete. (Deleting the
// policy afterwards deletes nothing either: as in OCM, the status then lists
// no object.)
func TestPruneSkippedWhenATemplateFails(t *testing.T) {
	const ns, data = "prune-tplerror", "prune-tplerror-data"
	template := func(value string) string {
		return fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: pt-cm},
        spec: {remediationAction: enforce, pruneObjectBehavior: DeleteAll,
          object-templates: [{complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap,
            metadata: {name: kept, namespace: %s}, data: {owner: '%s'}}}]}}`, data, value)
	}
	compliantRoot(t, ns, data, template("fleetpolicy"))
	if cmUID(t, data, "kept") == "" {
		t.Fatal("the policy did not create its ConfigMap")
	}

	testkit.Apply(t, hubC, policyOf(ns, "p", template(`{{ fromConfigMap "x" }}`), ""))
	testkit.Eventually(t, 45*time.Second, "the template error is evaluated", func() string {
		cp := spokeConfigPolicy(t, "pt-cm")
		if cp == nil || cp.Status.LastEvaluatedGeneration != cp.Generation || cp.Status.ComplianceState != policyv1.NonCompliant {
			return fmt.Sprintf("status %+v", cp)
		}
		return ""
	})
	settle()
	if cmUID(t, data, "kept") == "" {
		t.Fatal("an evaluation with a template error pruned the ConfigMap")
	}
}

// TestPruneNotOnHubTemplateError: a template that comes back with OCM's
// hub-templates-error annotation is removed from the cluster, but a hub
// template error asks for no deletion: what the policy created stays, as with
// OCM's add-on (which sets pruneObjectBehavior to None first).
func TestPruneNotOnHubTemplateError(t *testing.T) {
	const ns, data = "prune-hub-error", "prune-hub-error-data"
	template := pruningTemplate("ph-cm", "enforce", "DeleteIfCreated", data, "made")
	compliantRoot(t, ns, data, template)
	if cmUID(t, data, "made") == "" {
		t.Fatal("the policy did not create its ConfigMap")
	}
	failed := strings.Replace(template, "metadata: {name: ph-cm}",
		"metadata: {name: ph-cm, annotations: {policy.open-cluster-management.io/hub-templates-error: 'the ConfigMap is missing'}}", 1)
	if failed == template {
		t.Fatal("the test could not annotate the template")
	}
	testkit.Apply(t, hubC, policyOf(ns, "p", failed, ""))
	testkit.Eventually(t, 45*time.Second, "the template with a hub template error is removed", func() string {
		if cp := spokeConfigPolicy(t, "ph-cm"); cp != nil {
			return fmt.Sprintf("ph-cm is still there, pruneObjectBehavior %q, finalizers %v", cp.Spec.PruneObjectBehavior, cp.Finalizers)
		}
		return ""
	})
	settle()
	if cmUID(t, data, "made") == "" {
		t.Error("a hub template error deleted the ConfigMap the policy had created")
	}
}
