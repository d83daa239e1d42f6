package spoke_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// labelledConfigMaps creates ConfigMaps on the spoke, each "namespace/name
// label=value k=value" (label and data optional: "-" for none).
func labelledConfigMaps(t *testing.T, specs ...string) {
	t.Helper()
	var docs []string
	for _, spec := range specs {
		var id, label, data string
		if _, err := fmt.Sscan(spec, &id, &label, &data); err != nil {
			t.Fatalf("bad ConfigMap spec %q: %v", spec, err)
		}
		ns, name, _ := strings.Cut(id, "/")
		if err := localplane.EnsureNamespace(context.Background(), spokeC, ns); err != nil {
			t.Fatal(err)
		}
		doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s", name, ns)
		if k, v, ok := strings.Cut(label, "="); ok {
			doc += fmt.Sprintf(", labels: {%s: %q}", k, v)
		}
		doc += "}\n"
		if k, v, ok := strings.Cut(data, "="); ok {
			doc += fmt.Sprintf("data: {%s: %q}\n", k, v)
		}
		docs = append(docs, doc)
	}
	testkit.Apply(t, spokeC, strings.Join(docs, "---\n"))
}

// cmData is the data of ConfigMap ns/name on the spoke (nil when it does not
// exist).
func cmData(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if !exists(t, spokeC, cm) {
		return nil
	}
	if cm.Data == nil {
		return map[string]string{}
	}
	return cm.Data
}

// selectorRoot applies root policy ns/p whose one ConfigurationPolicy
// template (named template) has the given remediationAction and object
// templates (a YAML flow sequence) over the namespaces osel-*, and binds it.
func selectorRoot(t *testing.T, ns, template, action, objectTemplates string) {
	t.Helper()
	testkit.Apply(t, hubC, policyOf(ns, "p", fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: %s},
        spec: {remediationAction: %s, namespaceSelector: {include: ["osel-*"]}, object-templates: %s}}`, template, action, objectTemplates), ""))
	bindToCluster(t, ns, "p")
}

// expectMessage waits until the newest history message of root policy ns/p
// on the spoke is want.
func expectMessage(t *testing.T, ns, want string) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, want, func() string {
		if got := newestMessage(spokePolicy(t, ns, "p"), 0); got != want {
			return "newest message " + got
		}
		return ""
	})
}

// expectInHistory waits until the history of root policy ns/p on the spoke
// holds want.
func expectInHistory(t *testing.T, ns, want string) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, want+" in the history", func() string {
		p := spokePolicy(t, ns, "p")
		if p == nil || len(p.Status.Details) == 0 || p.Status.Details[0] == nil {
			return "no history"
		}
		for _, h := range p.Status.Details[0].History {
			if h.Message == want {
				return ""
			}
		}
		return "newest message " + newestMessage(p, 0)
	})
}

// expectRelated waits until the relatedObjects of the spoke's
// ConfigurationPolicy name are want, each "namespace/name compliant reason",
// with " +uid" when it records the object's uid.
func expectRelated(t *testing.T, name string, want ...string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("related objects %q", want), func() string {
		cp := spokeConfigPolicy(t, name)
		if cp == nil {
			return "no ConfigurationPolicy " + name
		}
		var got []string
		for _, ro := range cp.Status.RelatedObjects {
			s := fmt.Sprintf("%s/%s %s %q", ro.Object.Metadata.Namespace, ro.Object.Metadata.Name, ro.Compliant, ro.Reason)
			if ro.Properties != nil && ro.Properties.UID != "" {
				s += " +uid"
			}
			got = append(got, s)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("related objects %q", got)
		}
		return ""
	})
}

// TestObjectSelectorInformThenEnforce: a musthave template without a name
// and with an objectSelector checks each ConfigMap the selector selects in
// each namespace of the namespaceSelector, as if it named it; enforced, it
// updates those that differ, leaves the unselected ones alone and creates
// nothing where nothing is selected.
func TestObjectSelectorInformThenEnforce(t *testing.T) {
	const ns = "objsel-musthave"
	labelledConfigMaps(t,
		"osel-a/one pick=yes k=v", "osel-a/two pick=yes k=w", "osel-a/left - k=w",
		"osel-b/three pick=yes -", "osel-b/other pick=no k=w")
	if err := localplane.EnsureNamespace(context.Background(), spokeC, "osel-c"); err != nil {
		t.Fatal(err)
	}
	const templates = `[{complianceType: musthave, objectSelector: {matchLabels: {pick: "yes"}},
          objectDefinition: {apiVersion: v1, kind: ConfigMap, data: {k: v}}}]`
	selectorRoot(t, ns, "osel-mh", "inform", templates)
	expectMessage(t, ns, "NonCompliant; violation - "+
		"configmaps [two] found but not as specified in namespace osel-a; configmaps [three] found but not as specified in namespace osel-b")
	expectRelated(t, "osel-mh",
		`osel-a/one Compliant "Resource found as expected" +uid`,
		`osel-a/two NonCompliant "Resource found but does not match" +uid`,
		`osel-b/three NonCompliant "Resource found but does not match" +uid`)

	selectorRoot(t, ns, "osel-mh", "enforce", templates)
	// The watch events of its own updates evaluate the policy again, which
	// finds the objects as it wrote them and says nothing new: the enforcing
	// evaluation stays the newest entry.
	enforced := "Compliant; notification - configmaps [one] found as specified in namespace osel-a; " +
		"configmaps [two] was updated successfully in namespace osel-a; configmaps [three] was updated successfully in namespace osel-b"
	expectMessage(t, ns, enforced)
	time.Sleep(3 * time.Second)
	if got := newestMessage(spokePolicy(t, ns, "p"), 0); got != enforced {
		t.Errorf("after the watch events of its own updates the newest message is %q, want the enforcing one", got)
	}
	for _, id := range []string{"osel-a/one", "osel-a/two", "osel-b/three"} {
		ns, name, _ := strings.Cut(id, "/")
		if got := cmData(t, ns, name)["k"]; got != "v" {
			t.Errorf("%s: k is %q, want v", id, got)
		}
	}
	for _, id := range []string{"osel-a/left", "osel-b/other"} {
		ns, name, _ := strings.Cut(id, "/")
		if got := cmData(t, ns, name)["k"]; got != "w" {
			t.Errorf("%s is not selected but its k is now %q", id, got)
		}
	}
	list := &corev1.ConfigMapList{}
	if err := spokeC.List(context.Background(), list, client.InNamespace("osel-c")); err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		t.Errorf("enforce created ConfigMap osel-c/%s from a selector", cm.Name)
	}
}

// TestObjectSelectorMustNotHave: a mustnothave template with an
// objectSelector is violated by the selected objects that match the rest of
// the template, and only those are deleted when enforced; then it is
// compliant, relating the selected objects that remain.
func TestObjectSelectorMustNotHave(t *testing.T) {
	const ns = "objsel-mustnothave"
	labelledConfigMaps(t,
		"osel-m/match-1 gone=yes k=v", "osel-m/match-2 gone=yes k=v", "osel-m/unlabelled - k=v", "osel-m/differs gone=yes k=w")
	const templates = `[{complianceType: mustnothave, objectSelector: {matchExpressions: [{key: gone, operator: Exists}]},
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: osel-m}, data: {k: v}}}]`
	selectorRoot(t, ns, "osel-mnh", "inform", templates)
	expectMessage(t, ns, "NonCompliant; violation - configmaps [match-1, match-2] found in namespace osel-m")
	expectRelated(t, "osel-mnh", `osel-m/match-1 NonCompliant "Resource found but should not exist"`, `osel-m/match-2 NonCompliant "Resource found but should not exist"`)

	selectorRoot(t, ns, "osel-mnh", "enforce", templates)
	expectMessage(t, ns, "Compliant; notification - configmaps missing as expected in namespace osel-m")
	for name, wantExists := range map[string]bool{"match-1": false, "match-2": false, "unlabelled": true, "differs": true} {
		if got := cmData(t, "osel-m", name) != nil; got != wantExists {
			t.Errorf("ConfigMap osel-m/%s exists: %v, want %v", name, got, wantExists)
		}
	}
	expectRelated(t, "osel-mnh", `osel-m/differs Compliant ""`)
}

// TestObjectSelectorEdges: a selector that selects nothing is compliant and
// creates nothing, {} selects every object of the kind, a name in the
// objectDefinition wins over the selector, and a malformed selector is a
// violation naming it.
func TestObjectSelectorEdges(t *testing.T) {
	const ns = "objsel-edges"
	labelledConfigMaps(t, "osel-e/a - k=v", "osel-e/b x=y k=v")
	selectorRoot(t, ns, "osel-edges", "enforce", `[
          {complianceType: musthave, objectSelector: {matchLabels: {none: here}},
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: osel-e}, data: {k: v}}},
          {complianceType: musthave, objectSelector: {},
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: osel-e}, data: {k: v}}},
          {complianceType: musthave, objectSelector: {matchLabels: {none: here}},
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: osel-e}, data: {k: v}}},
          {complianceType: musthave, objectSelector: {matchExpressions: [{key: name, operator: Seriously}]},
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: osel-e}, data: {k: v}}}]`)
	expectMessage(t, ns, "NonCompliant; violation - No objects of kind ConfigMap were matched from the policy objectSelector; "+
		"configmaps [a, b] found as specified in namespace osel-e; "+
		"configmaps [a] found as specified in namespace osel-e; "+
		`Error parsing provided objectSelector in the object-template at index [3]: "Seriously" is not a valid label selector operator`)
	// The spoke says the compliance event before it writes the status.
	testkit.Eventually(t, 45*time.Second, "the template selecting nothing is Compliant", func() string {
		cp := spokeConfigPolicy(t, "osel-edges")
		if cp == nil || len(cp.Status.CompliancyDetails) != 4 || cp.Status.CompliancyDetails[0].ComplianceState != policyv1.Compliant {
			return fmt.Sprintf("ConfigurationPolicy %+v", cp)
		}
		return ""
	})
	list := &corev1.ConfigMapList{}
	if err := spokeC.List(context.Background(), list, client.InNamespace("osel-e")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Errorf("enforce created a ConfigMap from a selector that selects nothing: %d ConfigMaps in osel-e", len(list.Items))
	}
}

// TestObjectSelectorTemplatesPerObject: with an objectSelector, the
// managed-cluster templates of the objectDefinition are resolved for each
// selected object (.ObjectName, .ObjectNamespace, .Object), and a templated
// name that is not the selected object's is a violation.
func TestObjectSelectorTemplatesPerObject(t *testing.T) {
	const ns = "objsel-templates"
	labelledConfigMaps(t, "osel-t/first tpl=yes k=1", "osel-t/second tpl=yes k=2", "osel-t/unpicked - k=3")
	selectorRoot(t, ns, "osel-tpl", "enforce", `[
          {complianceType: musthave, objectSelector: {matchLabels: {tpl: "yes"}},
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: osel-t},
              data: {self: '{{ .ObjectNamespace }}/{{ .ObjectName }}', was: '{{ .Object.data.k }}'}}}]`)
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.Compliant})
	for name, k := range map[string]string{"first": "1", "second": "2"} {
		data := cmData(t, "osel-t", name)
		if data["self"] != "osel-t/"+name || data["was"] != k {
			t.Errorf("ConfigMap osel-t/%s: data %v, want self osel-t/%s and was %s", name, data, name, k)
		}
	}
	if data := cmData(t, "osel-t", "unpicked"); data["self"] != "" {
		t.Errorf("the unselected ConfigMap was written: %v", data)
	}

	selectorRoot(t, ns, "osel-tpl", "enforce", `[
          {complianceType: musthave, objectSelector: {matchLabels: {tpl: "yes"}},
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: '{{ "another" }}', namespace: osel-t}, data: {k: v}}}]`)
	expectMessage(t, ns, "NonCompliant; violation - The object definition's name must match the result from the object selector after template resolution")
	if cmData(t, "osel-t", "another") != nil {
		t.Error("the templated name was created")
	}
}
