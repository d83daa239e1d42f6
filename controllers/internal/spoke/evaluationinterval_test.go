package spoke_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// The spoke of these tests has no periodic evaluation of its own: a policy
// evaluated again within promptly of a change, with no duration of its own,
// was evaluated by watch.
const promptly = 15 * time.Second

// openWatches is the number of WATCH requests open on the managed cluster's
// API server for resource (its apiserver_longrunning_requests gauge): the
// watches the spoke holds on objects of a kind nothing else watches.
func openWatches(t *testing.T, resource string) int {
	t.Helper()
	cs, err := kubernetes.NewForConfig(spokeConfig)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	found := false
	scanner := bufio.NewScanner(bytes.NewReader(raw))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") {
			continue
		}
		found = true
		if !strings.Contains(line, `resource="`+resource+`"`) || !strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		value, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		total += int(value)
	}
	if !found {
		t.Fatal("the API server reports no apiserver_longrunning_requests")
	}
	return total
}

// expectOpenWatches waits until want WATCH requests are open for resource.
func expectOpenWatches(t *testing.T, resource string, want int, why string) {
	t.Helper()
	testkit.Eventually(t, promptly, fmt.Sprintf("%d watches of %s: %s", want, resource, why), func() string {
		if got := openWatches(t, resource); got != want {
			return fmt.Sprintf("%d open", got)
		}
		return ""
	})
}

// expectPromptCompliance waits, no longer than promptly, until root policy
// ns/name is state on the spoke.
func expectPromptCompliance(t *testing.T, ns, name string, state policyv1.ComplianceState) {
	t.Helper()
	testkit.Eventually(t, promptly, fmt.Sprintf("%s/%s is %s", ns, name, state), func() string {
		p := spokePolicy(t, ns, name)
		if p == nil {
			return "not on the spoke"
		}
		if p.Status.ComplianceState != state {
			return fmt.Sprintf("%q (%s)", p.Status.ComplianceState, newestMessage(p, 0))
		}
		return ""
	})
}

// setConfigMapOwner writes data.owner of ConfigMap ns/name on the spoke.
func setConfigMapOwner(t *testing.T, ns, name, owner string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := spokeC.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			return err
		}
		cm.Data["owner"] = owner
		return spokeC.Update(context.Background(), cm)
	}); err != nil {
		t.Fatal(err)
	}
}

// podTemplate creates PodTemplate ns/name on the spoke.
func podTemplate(t *testing.T, ns, name string) {
	t.Helper()
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}
	if err := spokeC.Create(context.Background(), pt); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// podTemplatesPolicy is a ConfigurationPolicy template informing that
// PodTemplates data/names exist, with the given spec.evaluationInterval (YAML
// flow mapping, "" for none).
func podTemplatesPolicy(name, data, interval string, names ...string) string {
	var templates []string
	for _, n := range names {
		templates = append(templates, fmt.Sprintf(`{complianceType: musthave,
          objectDefinition: {apiVersion: v1, kind: PodTemplate, metadata: {name: %s, namespace: %s}}}`, n, data))
	}
	field := ""
	if interval != "" {
		field = ", evaluationInterval: " + interval
	}
	return fmt.Sprintf(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: %s},
        spec: {remediationAction: inform%s, object-templates: [%s]}}`, name, field, strings.Join(templates, ", "))
}

// TestWatchIntervalReevaluatesOnChange: an inform policy with
// evaluationInterval watch is evaluated again as soon as the ConfigMap it
// checks changes, both ways, and its custom message sees the whole ConfigMap
// in .Policy.status.relatedObjects, as OCM gives it to a policy evaluated by
// watch.
func TestWatchIntervalReevaluatesOnChange(t *testing.T) {
	const ns, data = "watch-interval", "watch-interval-data"
	configMap(t, data, "watched")
	compliantRoot(t, ns, data, `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: wi-cm},
        spec: {remediationAction: inform, evaluationInterval: {compliant: watch, noncompliant: watch},
          customMessage: {compliant: 'owner is {{ range .Policy.status.relatedObjects }}{{ .object.data.owner }}{{ end }}'},
          object-templates: [{complianceType: musthave,
            objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: watched, namespace: watch-interval-data}, data: {owner: fleetpolicy}}}]}}`)
	testkit.Eventually(t, promptly, "the custom message reads the whole ConfigMap", func() string {
		if msg := newestMessage(spokePolicy(t, ns, "p"), 0); msg != "Compliant; owner is fleetpolicy" {
			return "newest history message " + msg
		}
		return ""
	})

	setConfigMapOwner(t, data, "watched", "someone-else")
	expectPromptCompliance(t, ns, "p", policyv1.NonCompliant)
	setConfigMapOwner(t, data, "watched", "fleetpolicy")
	expectPromptCompliance(t, ns, "p", policyv1.Compliant)
}

// TestUnsetIntervalWatchesWhatItEvaluates: without evaluationInterval a
// policy is evaluated by watch, as OCM's default is: it watches each object
// it names (one API watch each), a created object makes it Compliant at once,
// an object its spec stops naming is no longer watched, and deleting the
// policy removes its watches.
func TestUnsetIntervalWatchesWhatItEvaluates(t *testing.T) {
	const ns, data = "watch-unset", "watch-unset-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	before := openWatches(t, "podtemplates")
	testkit.Apply(t, hubC, policyOf(ns, "p", podTemplatesPolicy("wu-cm", data, "", "a", "b"), ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.NonCompliant})
	expectOpenWatches(t, "podtemplates", before+2, "one per PodTemplate the policy names")

	podTemplate(t, data, "a")
	podTemplate(t, data, "b")
	expectPromptCompliance(t, ns, "p", policyv1.Compliant)

	testkit.Apply(t, hubC, policyOf(ns, "p", podTemplatesPolicy("wu-cm", data, "", "a"), ""))
	expectOpenWatches(t, "podtemplates", before+1, "the spec no longer names b")

	deleteRoot(t, ns, "p", "wu-cm")
	expectOpenWatches(t, "podtemplates", before, "the policy is deleted")
}

// TestUnnamedObjectsWatchedInSelectedNamespaces: a policy without
// evaluationInterval whose object template has no name watches its kind in
// each namespace its namespaceSelector picks (one API watch each), and the
// namespaces: a forbidden PodTemplate appearing in a selected namespace, or
// in a namespace created later, makes it NonCompliant at once.
func TestUnnamedObjectsWatchedInSelectedNamespaces(t *testing.T) {
	const ns = "watch-unnamed"
	forbidden := func(namespace string) *corev1.PodTemplate {
		return &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "forbidden"},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"forbidden": "yes"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		}
	}
	before := openWatches(t, "podtemplates")
	compliantRoot(t, ns, "watch-unnamed-a", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: wn-cm},
        spec: {remediationAction: inform, namespaceSelector: {include: ["watch-unnamed-*"]},
          object-templates: [{complianceType: mustnothave,
            objectDefinition: {apiVersion: v1, kind: PodTemplate, template: {metadata: {labels: {forbidden: "yes"}}}}}]}}`)
	expectOpenWatches(t, "podtemplates", before+1, "the kind in the one namespace selected")

	if err := spokeC.Create(context.Background(), forbidden("watch-unnamed-a")); err != nil {
		t.Fatal(err)
	}
	expectPromptCompliance(t, ns, "p", policyv1.NonCompliant)
	if err := spokeC.Delete(context.Background(), forbidden("watch-unnamed-a")); err != nil {
		t.Fatal(err)
	}
	expectPromptCompliance(t, ns, "p", policyv1.Compliant)

	if err := localplane.EnsureNamespace(context.Background(), spokeC, "watch-unnamed-later"); err != nil {
		t.Fatal(err)
	}
	expectOpenWatches(t, "podtemplates", before+2, "the kind in the namespace created later too")
	if err := spokeC.Create(context.Background(), forbidden("watch-unnamed-later")); err != nil {
		t.Fatal(err)
	}
	expectPromptCompliance(t, ns, "p", policyv1.NonCompliant)

	deleteRoot(t, ns, "p", "wn-cm")
	expectOpenWatches(t, "podtemplates", before, "the policy is deleted")
}

// TestDurationIntervalEvaluatesWithoutWatching: a policy whose
// evaluationInterval changes from watch (unset) to a duration drops its
// watches and is evaluated again on its timer: the PodTemplate it names,
// created afterwards, makes it Compliant while nothing watches it.
func TestDurationIntervalEvaluatesWithoutWatching(t *testing.T) {
	const ns, data = "watch-duration", "watch-duration-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	before := openWatches(t, "podtemplates")
	testkit.Apply(t, hubC, policyOf(ns, "p", podTemplatesPolicy("wd-cm", data, "", "timed"), ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.NonCompliant})
	expectOpenWatches(t, "podtemplates", before+1, "watched while the interval is unset")

	testkit.Apply(t, hubC, policyOf(ns, "p", podTemplatesPolicy("wd-cm", data, "{compliant: 2s, noncompliant: 2s}", "timed"), ""))
	expectOpenWatches(t, "podtemplates", before, "the interval is now a duration")
	podTemplate(t, data, "timed")
	expectPromptCompliance(t, ns, "p", policyv1.Compliant)
	if got := openWatches(t, "podtemplates"); got != before {
		t.Errorf("%d watches of podtemplates open, want %d: a duration evaluates without watching", got, before)
	}
}

// TestWatchWaitsForAMissingNamespace: an enforced policy evaluated by watch
// whose ConfigMap cannot be created because its namespace does not exist
// watches the namespace, as OCM does: creating the namespace creates the
// ConfigMap at once.
func TestWatchWaitsForAMissingNamespace(t *testing.T) {
	const ns, data = "watch-missing-ns", "watch-missing-ns-later"
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: wm-cm},
        spec: {remediationAction: enforce, object-templates: [{complianceType: musthave,
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: made, namespace: `+data+`}, data: {owner: fleetpolicy}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	testkit.Eventually(t, 45*time.Second, "the policy fails to create the ConfigMap", func() string {
		p := spokePolicy(t, ns, "p")
		if msg := newestMessage(p, 0); p == nil || p.Status.ComplianceState != policyv1.NonCompliant || !strings.Contains(msg, "cannot be created") {
			return "newest history message " + msg
		}
		return ""
	})

	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	expectPromptCompliance(t, ns, "p", policyv1.Compliant)
	if cmUID(t, data, "made") == "" {
		t.Error("the ConfigMap was not created")
	}
}

// TestWatchRetriesAMissingKind: a policy evaluated by watch whose object
// template names a kind the cluster does not serve is evaluated again every
// 10s, as OCM does (nothing can be watched before the CRD comes): once the
// CRD is installed, it finds its object.
func TestWatchRetriesAMissingKind(t *testing.T) {
	const ns, data = "watch-missing-kind", "watch-missing-kind-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: wk-cm},
        spec: {remediationAction: enforce, object-templates: [{complianceType: musthave,
          objectDefinition: {apiVersion: watchtest.fleetpolicy.io/v1, kind: Widget, metadata: {name: w, namespace: `+data+`}, spec: {size: 3}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	testkit.Eventually(t, 45*time.Second, "the policy reports the missing kind", func() string {
		p := spokePolicy(t, ns, "p")
		if msg := newestMessage(p, 0); p == nil || !strings.Contains(msg, "couldn't find the resource of kind Widget") {
			return "newest history message " + msg
		}
		return ""
	})

	testkit.Apply(t, spokeC, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.watchtest.fleetpolicy.io}
spec:
  group: watchtest.fleetpolicy.io
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`)
	// MissingKindRetry is 10s; the CRD takes a moment to be served.
	testkit.Eventually(t, 25*time.Second, "the policy creates its Widget once the CRD is served", func() string {
		p := spokePolicy(t, ns, "p")
		if p == nil || p.Status.ComplianceState != policyv1.Compliant {
			return "newest history message " + newestMessage(p, 0)
		}
		return ""
	})
}

// TestObjectSelectorWatched: a policy evaluated by watch whose object template
// has an objectSelector watches the selected kind (one API watch per
// namespace): a selected PodTemplate that differs from the template, created
// later, makes it NonCompliant at once.
func TestObjectSelectorWatched(t *testing.T) {
	const ns, data = "watch-selector", "watch-selector-data"
	if err := localplane.EnsureNamespace(context.Background(), spokeC, data); err != nil {
		t.Fatal(err)
	}
	before := openWatches(t, "podtemplates")
	testkit.Apply(t, hubC, policyOf(ns, "p", `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: ws-cm},
        spec: {remediationAction: inform, object-templates: [{complianceType: musthave, objectSelector: {matchLabels: {pick: "yes"}},
          objectDefinition: {apiVersion: v1, kind: PodTemplate, metadata: {namespace: `+data+`}, template: {metadata: {labels: {tier: web}}}}}]}}`, ""))
	bindToCluster(t, ns, "p")
	expectCompliance(t, ns, map[string]policyv1.ComplianceState{"p": policyv1.Compliant})
	expectOpenWatches(t, "podtemplates", before+1, "the selected kind in the namespace")

	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: "picked", Labels: map[string]string{"pick": "yes"}},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "db"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		},
	}
	if err := spokeC.Create(context.Background(), pt); err != nil {
		t.Fatal(err)
	}
	expectPromptCompliance(t, ns, "p", policyv1.NonCompliant)
	deleteRoot(t, ns, "p", "ws-cm")
	expectOpenWatches(t, "podtemplates", before, "the policy is deleted")
}
