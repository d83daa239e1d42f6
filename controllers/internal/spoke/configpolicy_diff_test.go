package spoke_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
)

// create creates obj on the spoke.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := localplane.EnsureNamespace(context.Background(), spokeC, obj.GetNamespace()); err != nil {
		t.Fatal(err)
	}
	if err := spokeC.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// relatedDiffs waits until the spoke's ConfigurationPolicy name relates to
// want objects, all with properties, and returns their properties.diff by
// object name.
func relatedDiffs(t *testing.T, name string, want int) map[string]string {
	t.Helper()
	var diffs map[string]string
	testkit.Eventually(t, 45*time.Second, "the related objects of "+name, func() string {
		cp := spokeConfigPolicy(t, name)
		if cp == nil {
			return name + " is not on the spoke"
		}
		diffs = map[string]string{}
		for _, ro := range cp.Status.RelatedObjects {
			if ro.Properties == nil {
				return fmt.Sprintf("%s has no properties: %+v", ro.Object.Metadata.Name, ro)
			}
			diffs[ro.Object.Metadata.Name] = ro.Properties.Diff
		}
		if len(diffs) != want {
			return fmt.Sprintf("%d related objects, want %d: %+v", len(diffs), want, cp.Status.RelatedObjects)
		}
		return ""
	})
	return diffs
}

// TestRecordDiff: an inform musthave policy whose objects differ records, per
// object template's recordDiff, the diff in status.relatedObjects (InStatus,
// and unset for a kind without sensitive data), a redaction note (unset for
// a ConfigMap or a Secret, and for a definition whose template reads a
// Secret), or nothing (Log, None).
func TestRecordDiff(t *testing.T) {
	const ns, data = "record-diff", "record-diff-data"
	for _, name := range []string{"sa", "sa-templated"} {
		create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name, Labels: map[string]string{"team": "red"}}})
	}
	for _, name := range []string{"cm-instatus", "cm-unset", "cm-log", "cm-none"} {
		create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name}, Data: map[string]string{"k": "old"}})
	}
	for _, name := range []string{"secret-unset", "secret-instatus"} {
		create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name}, StringData: map[string]string{"k": "old-secret"}})
	}
	cm := func(name, recordDiff string) string {
		field := ""
		if recordDiff != "" {
			field = "recordDiff: " + recordDiff + ", "
		}
		return fmt.Sprintf(`{complianceType: musthave, %sobjectDefinition: {apiVersion: v1, kind: ConfigMap,
            metadata: {name: %s, namespace: %s}, data: {k: new}}}`, field, name, data)
	}
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: rd-cm},
        spec: {remediationAction: inform, object-templates: [
          {complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ServiceAccount,
            metadata: {name: sa, namespace: `+data+`, labels: {team: blue}}}},
          {complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ServiceAccount,
            metadata: {name: sa-templated, namespace: `+data+`,
              labels: {team: '{{ fromSecret "`+data+`" "secret-unset" "k" | base64dec }}'}}}},
          `+cm("cm-instatus", "InStatus")+`, `+cm("cm-unset", "")+`, `+cm("cm-log", "Log")+`, `+cm("cm-none", "None")+`,
          {complianceType: musthave, objectDefinition: {apiVersion: v1, kind: Secret,
            metadata: {name: secret-unset, namespace: `+data+`}, stringData: {k: new-secret}}},
          {complianceType: musthave, recordDiff: InStatus, objectDefinition: {apiVersion: v1, kind: Secret,
            metadata: {name: secret-instatus, namespace: `+data+`}, data: {k: bmV3LXNlY3JldA==}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.NonCompliant})

	diffs := relatedDiffs(t, "rd-cm", 8)
	wantDiff := func(name, change string) {
		t.Helper()
		header := fmt.Sprintf("--- %s/%s : existing\n+++ %s/%s : updated\n", data, name, data, name)
		if d := diffs[name]; !strings.HasPrefix(d, header) || !strings.Contains(d, change) {
			t.Errorf("%s: diff\n%s\nwant the header\n%s and\n%s", name, d, header, change)
		}
	}
	wantDiff("sa", "-    team: red\n+    team: blue\n")
	wantDiff("cm-instatus", "-  k: old\n+  k: new\n")
	// base64 of old-secret and new-secret: the Secret's diff is recorded
	// when the template asks for it.
	wantDiff("secret-instatus", "-  k: b2xkLXNlY3JldA==\n+  k: bmV3LXNlY3JldA==\n")
	for _, name := range []string{"cm-unset", "secret-unset", "sa-templated"} {
		if diffs[name] != configpolicy.RedactedDiff {
			t.Errorf("%s: diff %q, want the redaction note", name, diffs[name])
		}
	}
	for _, name := range []string{"cm-log", "cm-none"} {
		if diffs[name] != "" {
			t.Errorf("%s: diff %q in status, want none", name, diffs[name])
		}
	}
}

// immutableConfigMap creates ConfigMap name in namespace data, immutable,
// holding k: old, with the finalizers given.
func immutableConfigMap(t *testing.T, data, name string, finalizers ...string) types.UID {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name, Finalizers: finalizers},
		Immutable: ptr.To(true), Data: map[string]string{"k": "old"}}
	create(t, cm)
	return cm.UID
}

// immutableTemplate is a ConfigurationPolicy template named name wanting the
// immutable ConfigMap name of namespace data to hold k: new, with
// recreateOption recreate ("" for none).
func immutableTemplate(name, action, recreate, data string) string {
	field := ""
	if recreate != "" {
		field = "recreateOption: " + recreate + ", "
	}
	return fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: %s},
        spec: {remediationAction: %s, object-templates: [{complianceType: musthave, %sobjectDefinition: {apiVersion: v1, kind: ConfigMap,
          metadata: {name: %s, namespace: %s}, immutable: true, data: {k: new}}}]}}`, name, action, field, name, data)
}

// TestRecreateRefusedImmutable: without recreateOption, an enforced policy
// whose update changes an immutable field is NonCompliant with OCM's message
// and leaves the object alone; an inform policy with recreateOption
// IfRequired only reports the difference.
func TestRecreateRefusedImmutable(t *testing.T) {
	const enforced, informed, data = "recreate-none", "recreate-inform", "recreate-none-data"
	before := immutableConfigMap(t, data, "rn-frozen")
	informedBefore := immutableConfigMap(t, data, "ri-frozen")
	testkit.Apply(t, hubC, policyOf(enforced, "p", immutableTemplate("rn-frozen", "enforce", "", data), ""))
	testkit.Apply(t, hubC, policyOf(informed, "p", immutableTemplate("ri-frozen", "inform", "IfRequired", data), ""))
	bindToCluster(t, enforced, "p")
	bindToCluster(t, informed, "p")
	expectMessage(t, enforced, "NonCompliant; violation - configmaps [rn-frozen] in namespace recreate-none-data cannot be updated, "+
		`likely due to immutable fields not matching, you may set spec["object-templates"][].recreateOption to recreate the object`)
	expectMessage(t, informed, "NonCompliant; violation - configmaps [ri-frozen] found but not as specified in namespace recreate-none-data")
	settle()
	for name, uid := range map[string]types.UID{"rn-frozen": before, "ri-frozen": informedBefore} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name}}
		if !exists(t, spokeC, cm) || cm.UID != uid || cm.Data["k"] != "old" {
			t.Errorf("%s was touched: uid %s (was %s), data %v", name, cm.UID, uid, cm.Data)
		}
	}
}

// TestRecreateIfRequired: with recreateOption IfRequired, an enforced policy
// whose update changes an immutable field deletes the object and creates it
// as the template defines it; the related object has the new uid and, as the
// policy did not create the object it replaced, is not created by the policy.
func TestRecreateIfRequired(t *testing.T) {
	const ns, data = "recreate-ifrequired", "recreate-ifrequired-data"
	before := immutableConfigMap(t, data, "rq-frozen")
	compliantRoot(t, ns, data, immutableTemplate("rq-frozen", "enforce", "IfRequired", data))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "rq-frozen"}}
	if !exists(t, spokeC, cm) || cm.UID == before || cm.Data["k"] != "new" {
		t.Fatalf("the ConfigMap was not recreated: uid %s (was %s), data %v", cm.UID, before, cm.Data)
	}
	testkit.Eventually(t, 30*time.Second, "the related object of the recreated ConfigMap", func() string {
		cp := spokeConfigPolicy(t, "rq-frozen")
		if cp == nil || len(cp.Status.RelatedObjects) != 1 || cp.Status.RelatedObjects[0].Properties == nil {
			return fmt.Sprintf("related objects %+v", cp)
		}
		props := cp.Status.RelatedObjects[0].Properties
		if props.UID != string(cm.UID) || props.CreatedByPolicy == nil || *props.CreatedByPolicy {
			return fmt.Sprintf("properties uid %s createdByPolicy %v, want uid %s, not created", props.UID, props.CreatedByPolicy, cm.UID)
		}
		return ""
	})
}

// TestRecreateAlways: with recreateOption Always, enforce recreates an object
// that an update would fix: a new uid, and the object as the template
// defines it (the keys it does not name are gone, as in OCM).
func TestRecreateAlways(t *testing.T) {
	const ns, data = "recreate-always", "recreate-always-data"
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "ra-cm"}, Data: map[string]string{"k": "old", "extra": "e"}}
	create(t, old)
	compliantRoot(t, ns, data, `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: ra-cm},
        spec: {remediationAction: enforce, object-templates: [{complianceType: musthave, recreateOption: Always,
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: ra-cm, namespace: `+data+`}, data: {k: new}}}]}}`)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "ra-cm"}}
	if !exists(t, spokeC, cm) || cm.UID == old.UID || len(cm.Data) != 1 || cm.Data["k"] != "new" {
		t.Fatalf("the ConfigMap was not recreated: uid %s (was %s), data %v", cm.UID, old.UID, cm.Data)
	}
	// Evaluated by watch, the policy is evaluated again at once after the
	// recreation ("found as specified"): the recreating one is in the history.
	expectInHistory(t, ns, "Compliant; notification - configmaps [ra-cm] was updated successfully in namespace "+data)
}

// TestRecreateWaitsForDeletion: an object deleted to be recreated that is
// still there (a finalizer holds it) makes the policy NonCompliant with OCM's
// message; once it is gone, the next evaluation creates it again.
func TestRecreateWaitsForDeletion(t *testing.T) {
	const ns, data, hold = "recreate-wait", "recreate-wait-data", "fleetpolicy.test/hold"
	before := immutableConfigMap(t, data, "rw-frozen", hold)
	testkit.Apply(t, hubC, policyOf(ns, "p", immutableTemplate("rw-frozen", "enforce", "IfRequired", data), ""))
	bindToCluster(t, ns, "p")
	expectMessage(t, ns, "NonCompliant; violation - configmaps [rw-frozen] in namespace recreate-wait-data "+
		"timed out waiting for the object to delete during recreate, will retry on the next policy evaluation")
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "rw-frozen"}}
	if !exists(t, spokeC, held) || held.UID != before || held.DeletionTimestamp.IsZero() {
		t.Fatalf("the ConfigMap is not the one being deleted: %+v", held.ObjectMeta)
	}
	held.Finalizers = nil
	if err := spokeC.Update(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.Compliant})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "rw-frozen"}}
	if !exists(t, spokeC, cm) || cm.UID == before || cm.Data["k"] != "new" {
		t.Fatalf("the ConfigMap was not recreated: uid %s (was %s), data %v", cm.UID, before, cm.Data)
	}
}

// TestRecordDiffSelected: the objects an objectSelector selects have their
// diff recorded as named objects do.
func TestRecordDiffSelected(t *testing.T) {
	const ns, data = "record-diff-selected", "record-diff-selected-data"
	for _, name := range []string{"sel-a", "sel-b"} {
		create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name,
			Labels: map[string]string{"pick": "yes", "team": "red"}}})
	}
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: rds-sa},
        spec: {remediationAction: inform, object-templates: [{complianceType: musthave, objectSelector: {matchLabels: {pick: "yes"}},
          objectDefinition: {apiVersion: v1, kind: ServiceAccount, metadata: {namespace: `+data+`, labels: {team: blue}}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.NonCompliant})
	diffs := relatedDiffs(t, "rds-sa", 2)
	for _, name := range []string{"sel-a", "sel-b"} {
		if d := diffs[name]; !strings.HasPrefix(d, "--- "+data+"/"+name+" : existing\n") || !strings.Contains(d, "-    team: red\n+    team: blue\n") {
			t.Errorf("%s: diff\n%s", name, d)
		}
	}
}
