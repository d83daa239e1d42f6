package placementtest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

var (
	plane *localplane.Plane
	c     client.Client
	root  string
)

var clusters = []string{"eu-dublin", "eu-frankfurt", "eu-paris", "us-virginia"}

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if root, err = localplane.RepoRoot(); err != nil {
		return 0, err
	}
	raw, err := os.ReadFile(filepath.Join(root, "manifests", "hub", "webhook.yaml"))
	if err != nil {
		return 0, err
	}
	webhookCfg := admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(raw, &webhookCfg); err != nil {
		return 0, err
	}
	if plane, err = localplane.StartWith("hub", localplane.Options{
		MutatingWebhooks: []admissionregistrationv1.MutatingWebhookConfiguration{webhookCfg},
	}); testkit.SkipsPackage(err) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	defer plane.Stop()
	c = plane.Client
	if err := localplane.EnsureNamespace(context.Background(), c, placement.Namespace); err != nil {
		return 0, err
	}
	// Labelled as OCM's registration labels them: outside the webhook's scope.
	for _, ns := range clusters {
		if err := localplane.EnsureClusterNamespace(context.Background(), c, ns); err != nil {
			return 0, err
		}
	}
	return m.Run(), nil
}

// startHub runs the hub with its placement webhook until the test ends or stop
// is called, and waits until the webhook server answers.
func startHub(t *testing.T) (stop func()) {
	t.Helper()
	h := hubtest.Start(t, plane.Config, func(o *hub.ManagerOptions) {
		o.Placement = true
		o.WebhookHost, o.WebhookPort, o.WebhookCertDir = plane.WebhookHost, plane.WebhookPort, plane.WebhookCertDir
	})
	testkit.Eventually(t, 30*time.Second, "the webhook server to answer", func() string {
		conn, err := tls.Dial("tcp", fmt.Sprintf("%s:%d", plane.WebhookHost, plane.WebhookPort), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err.Error()
		}
		conn.Close()
		return ""
	})
	return h.Stop
}

func failurePolicy(t *testing.T) admissionregistrationv1.FailurePolicyType {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: hub.PlacementWebhookConfiguration}, cfg); err != nil {
		t.Fatal(err)
	}
	return *cfg.Webhooks[0].FailurePolicy
}

func waitFailurePolicy(t *testing.T, want admissionregistrationv1.FailurePolicyType) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "failurePolicy "+string(want), func() string {
		if got := failurePolicy(t); got != want {
			return "failurePolicy is " + string(got)
		}
		return ""
	})
}

func deletePolicies(t *testing.T) {
	t.Helper()
	if err := c.DeleteAllOf(context.Background(), &corev1.ConfigMap{}, client.InNamespace(placement.Namespace),
		client.HasLabels{placement.LanguageLabel}); err != nil {
		t.Fatal(err)
	}
}

func getPolicy(t *testing.T, ns, name string) *policyv1.Policy {
	t.Helper()
	p := &policyv1.Policy{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func replicaClusters(t *testing.T, ns, name string) []string {
	t.Helper()
	list := &policyv1.PolicyList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{replication.LabelRootPolicy: replication.Name(ns, name)}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Namespace)
	}
	slices.Sort(out)
	return out
}

// TestFailOpenWithoutPolicies: with no placement policy the webhook allows
// everything and changes nothing, and its failurePolicy is Ignore, so even a
// hub that is down blocks nothing.
func TestFailOpenWithoutPolicies(t *testing.T) {
	stop := startHub(t)
	deletePolicies(t)
	waitFailurePolicy(t, admissionregistrationv1.Ignore)
	testkit.Apply(t, c, testkit.PolicyDoc("open", "p", map[string]string{"fleetpolicy.io/eu-jurisdiction-required": "true"}))
	if a := getPolicy(t, "open", "p").Annotations; a[placement.ClustersAnnotation] != "" {
		t.Fatalf("annotated without placement policies: %v", a)
	}
	stop()
	testkit.Apply(t, c, testkit.PolicyDoc("open", "q", nil)) // the webhook is down: allowed (Ignore)
}

// TestEUPCIExampleLive runs the EU/PCI example of examples/placement (apps that
// require EU jurisdiction go only to EU clusters with sufficient PCI
// compliance) live, in Rego and in CEL: admission annotates, the hub propagates only there, and a cluster
// relabelled out of the EU loses its replica.
func TestEUPCIExampleLive(t *testing.T) {
	for _, lang := range []string{"rego", "cel"} {
		t.Run(lang, func(t *testing.T) {
			startHub(t)
			deletePolicies(t)
			testkit.ApplyFile(t, c, "examples/placement/clusters.yaml")
			testkit.ApplyFile(t, c, "examples/placement/policy-"+lang+".yaml")
			waitFailurePolicy(t, admissionregistrationv1.Fail)
			name := "eu-pci-" + lang
			testkit.Eventually(t, 30*time.Second, "status annotation ok", func() string {
				cm := &corev1.ConfigMap{}
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: placement.Namespace, Name: name}, cm); err != nil {
					return err.Error()
				}
				if got := cm.Annotations[placement.StatusAnnotation]; got != `{"status":"ok"}` {
					return "status " + got
				}
				return ""
			})

			ns := "example-" + lang
			testkit.Apply(t, c, testkit.PolicyDoc(ns, "payments", map[string]string{
				"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "2",
			}))
			if got := getPolicy(t, ns, "payments").Annotations[placement.ClustersAnnotation]; got != "eu-dublin,eu-frankfurt" {
				t.Fatalf("admission placed payments on %q, want eu-dublin,eu-frankfurt", got)
			}
			// Bound to every cluster: admission alone narrows where it goes.
			testkit.Apply(t, c, testkit.PlacementRuleBinding(ns, "payments", clusters, "payments"))
			testkit.Eventually(t, 30*time.Second, "replicas only on qualifying EU clusters", func() string {
				if got := replicaClusters(t, ns, "payments"); !slices.Equal(got, []string{"eu-dublin", "eu-frankfurt"}) {
					return fmt.Sprintf("replicas on %v", got)
				}
				return ""
			})

			// eu-dublin leaves the EU: remediation narrows the placement and the
			// replica goes.
			setJurisdiction(t, "eu-dublin", "us")
			defer setJurisdiction(t, "eu-dublin", "eu")
			testkit.Eventually(t, 30*time.Second, "eu-dublin loses the replica", func() string {
				if got := replicaClusters(t, ns, "payments"); !slices.Equal(got, []string{"eu-frankfurt"}) {
					return fmt.Sprintf("replicas on %v, annotation %q", got, getPolicy(t, ns, "payments").Annotations[placement.ClustersAnnotation])
				}
				return ""
			})

			// Denied by the policy's own error.
			err := testkit.TryApply(t, c, testkit.PolicyDoc(ns, "bad-level", map[string]string{
				"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "high",
			}))
			if err == nil || !strings.Contains(err.Error(), "want a whole number") {
				t.Fatalf("want a denial carrying the policy's message, got %v", err)
			}
		})
	}
}

func setJurisdiction(t *testing.T, cluster, value string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Labels["jurisdiction"] = value
	if err := c.Update(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
}

func regoPolicy(name, body string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: fleetpolicy-placement
  labels: {fleetpolicy.io/placement-policy: rego}
data:
  policy.rego: |
    package fleetpolicy.placement
    %s
`, name, body)
}

// TestHotReloadAndBrokenPolicy changes a policy and expects placed resources to
// follow; then a policy that does not compile is reported in its status
// annotation and, policies existing, admission fails closed.
func TestHotReloadAndBrokenPolicy(t *testing.T) {
	startHub(t)
	deletePolicies(t)
	testkit.ApplyFile(t, c, "examples/placement/clusters.yaml")
	testkit.Apply(t, c, regoPolicy("pin", `annotations["placement.fleetpolicy.io/clusters"] := "eu-paris"`))
	waitFailurePolicy(t, admissionregistrationv1.Fail)
	testkit.Apply(t, c, testkit.PolicyDoc("reload", "p", nil))
	if got := getPolicy(t, "reload", "p").Annotations[placement.ClustersAnnotation]; got != "eu-paris" {
		t.Fatalf("placed on %q, want eu-paris", got)
	}
	testkit.Apply(t, c, regoPolicy("pin", `annotations["placement.fleetpolicy.io/clusters"] := "us-virginia"`))
	testkit.Eventually(t, 30*time.Second, "remediation after the policy changed", func() string {
		if got := getPolicy(t, "reload", "p").Annotations[placement.ClustersAnnotation]; got != "us-virginia" {
			return "placed on " + got
		}
		return ""
	})

	testkit.Apply(t, c, regoPolicy("broken", `annotations[ := "x"`))
	testkit.Eventually(t, 30*time.Second, "the broken policy's status", func() string {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: placement.Namespace, Name: "broken"}, cm); err != nil {
			return err.Error()
		}
		if s := cm.Annotations[placement.StatusAnnotation]; !strings.Contains(s, `"status":"error"`) || !strings.Contains(s, "policy.rego") {
			return "status " + s
		}
		return ""
	})
	err := testkit.TryApply(t, c, testkit.PolicyDoc("reload", "q", nil))
	if err == nil || !strings.Contains(err.Error(), "fail closed") {
		t.Fatalf("want a fail-closed denial while a policy is broken, got %v", err)
	}
	deletePolicies(t)
	waitFailurePolicy(t, admissionregistrationv1.Ignore)
}

// TestWebhookDownFailsClosedWhilePoliciesExist stops the hub while policies
// exist: the API server refuses governed resources (failurePolicy Fail), and
// only those: the namespaceSelector of manifests/hub/webhook.yaml leaves the
// hub's namespace, the cluster namespaces (labelled by OCM's registration) and
// namespaces labelled exempt writable.
func TestWebhookDownFailsClosedWhilePoliciesExist(t *testing.T) {
	ctx := context.Background()
	exempt := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "exempt", Labels: map[string]string{"placement.fleetpolicy.io/webhook": "exempt"}}}
	if err := c.Create(ctx, exempt); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	stop := startHub(t)
	deletePolicies(t)
	testkit.Apply(t, c, regoPolicy("any", `annotations["fleetpolicy.io/checked"] := "true"`))
	waitFailurePolicy(t, admissionregistrationv1.Fail)
	stop()
	err := testkit.TryApply(t, c, testkit.PolicyDoc("down", "p", nil))
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("want the API server to refuse while the webhook is down, got %v", err)
	}
	// The root-policy label exempts nothing at the API server: the webhook
	// itself tells the hub's replicas apart by their writer, so a labelled
	// Policy in a governed namespace is refused too while the webhook is down.
	err = c.Create(ctx, &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "down", Name: "down.r", Labels: map[string]string{replication.LabelRootPolicy: "down.r"}},
		Spec:       policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}},
	})
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("want a labelled Policy refused while the webhook is down, got %v", err)
	}
	// Outside the selector, writes go on without the hub.
	for _, ns := range []string{"us-virginia", "fleetpolicy-system", exempt.Name} {
		if err := testkit.TryApply(t, c, testkit.PolicyDoc(ns, "while-down", nil)); err != nil {
			t.Errorf("a Policy write in excluded namespace %s failed while the webhook is down: %v", ns, err)
		}
	}
	startHub(t)
	deletePolicies(t)
	waitFailurePolicy(t, admissionregistrationv1.Ignore)
}

// TestExplainEndpoint asks the hub, over TLS and as a caller allowed to,
// where a resource would go and why.
func TestExplainEndpoint(t *testing.T) {
	startHub(t)
	deletePolicies(t)
	testkit.ApplyFile(t, c, "examples/placement/clusters.yaml")
	testkit.ApplyFile(t, c, "examples/placement/policy-rego.yaml")
	waitFailurePolicy(t, admissionregistrationv1.Fail)
	token := serviceAccountToken(t, "explainer", "fleetpolicy-explain")
	body := testkit.PolicyDoc("explain", "payments", map[string]string{
		"fleetpolicy.io/eu-jurisdiction-required": "true", "fleetpolicy.io/pci-compliance-level": "2",
	})
	var resp *http.Response
	testkit.Eventually(t, 30*time.Second, "explain answers", func() string {
		var err error
		resp, err = postExplain(webhookAddr(), token, body)
		if err != nil {
			return err.Error()
		}
		if resp.StatusCode != http.StatusOK {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return fmt.Sprintf("%d %s", resp.StatusCode, msg)
		}
		return ""
	})
	defer resp.Body.Close()
	var got hub.ExplainResponse
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	reasons := map[string]string{}
	for _, cl := range got.Clusters {
		allowed[cl.Name] = cl.Allowed
		reasons[cl.Name] = strings.Join(cl.Reasons, "; ")
	}
	if got.Denied || !allowed["eu-dublin"] || !allowed["eu-frankfurt"] || allowed["eu-paris"] || allowed["us-virginia"] {
		t.Fatalf("explain: %+v", got)
	}
	if !strings.Contains(reasons["us-virginia"], "not in the EU") || !strings.Contains(reasons["eu-paris"], "below 2") {
		t.Fatalf("explain reasons: %v", reasons)
	}
	if list := (&policyv1.PolicyList{}); c.List(context.Background(), list, client.InNamespace("explain")) == nil && len(list.Items) != 0 {
		t.Fatal("explain created the resource")
	}
	deletePolicies(t)
}

// TestRootPolicyLabelExemptsNothingFromTenants: a Placement, and a Policy in a
// cluster namespace the webhook governs (one OCM's registration did not
// label), labelled as replicas but written by a tenant (not the hub's
// identity) are still evaluated: the placement policy's annotation is merged
// into both. (Labelled cluster namespaces are outside the webhook; the hub
// never propagates a Policy there, see the hub's TestPolicyInClusterNamespaceIsNoRoot.)
func TestRootPolicyLabelExemptsNothingFromTenants(t *testing.T) {
	startHub(t)
	deletePolicies(t)
	testkit.ApplyFile(t, c, "examples/placement/clusters.yaml")
	if err := localplane.EnsureNamespace(context.Background(), c, "unregistered"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "unregistered"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, c, regoPolicy("pin", `annotations["placement.fleetpolicy.io/clusters"] := "eu-paris"`))
	waitFailurePolicy(t, admissionregistrationv1.Fail)
	defer func() {
		deletePolicies(t)
		waitFailurePolicy(t, admissionregistrationv1.Ignore)
	}()

	cfg := rest.CopyConfig(plane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "tenant", Groups: []string{"system:masters"}}
	tenant, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localplane.ReadManifests(t.Name(), strings.NewReader(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata:
  name: disguised
  namespace: tenant-ns
  labels: {policy.open-cluster-management.io/root-policy: tenant-ns.disguised}
spec: {}
---
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata:
  name: tenant-ns.disguised
  namespace: unregistered
  labels: {policy.open-cluster-management.io/root-policy: tenant-ns.disguised}
spec:
  disabled: false
  remediationAction: inform
  policy-templates: []
`))
	if err != nil {
		t.Fatal(err)
	}
	// The stored objects, as admission left them (the hub deletes the
	// orphaned "replica" soon after).
	stored, err := localplane.Apply(context.Background(), tenant, objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range stored {
		if got := o.GetAnnotations()[placement.ClustersAnnotation]; got != "eu-paris" {
			t.Errorf("the tenant's labelled %s %s/%s was not evaluated: clusters annotation %q", o.GetKind(), o.GetNamespace(), o.GetName(), got)
		}
	}
}
