package interoptest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/configpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/history"
)

// ocmControllerComponent is the source component of the compliance Events
// OCM's config-policy-controller writes (for ConfigurationPolicies and
// OperatorPolicies alike).
const ocmControllerComponent = "configuration-policy-controller"

// TestFleetpolicySpokeWithOCMEvaluator: fleetpolicy's hub and spoke, the spoke
// started with --configurationpolicy-evaluator=ocm and
// --operatorpolicy-evaluator=ocm, and OCM's config-policy-controller (with
// OperatorPolicy on) on one managed cluster, which carries fleetpolicy's CRDs
// or, in place of fleetpolicy's ConfigurationPolicy and OperatorPolicy CRDs,
// OCM's. The spoke syncs the templates in dependency order and copies the
// encryption key; OCM's controller evaluates an inform policy NonCompliant
// and, once the policy enforces, creates its ConfigMap (decrypting a protected
// hub template value) and reports it Compliant; a policy depending on it stays
// Pending until then. The reports reach the replica and the root. Every
// compliance Event of a template comes from OCM's controller, none from
// fleetpolicy's evaluators; OCM's history and pruning fields survive the CRD;
// deleting the root makes OCM's controller prune what it created. An
// OperatorPolicy is synced by the spoke and evaluated by OCM's controller
// only (no OLM runs: inform and NonCompliant); one in fleetpolicy's spelling,
// which OCM's controller would ignore, is a template error; the finalizer
// fleetpolicy's OperatorPolicy controller set before the switch is released.
func TestFleetpolicySpokeWithOCMEvaluator(t *testing.T) {
	t.Run("fleetpolicy's CRDs", func(t *testing.T) { testOCMEvaluator(t, false) })
	t.Run("OCM's ConfigurationPolicy and OperatorPolicy CRDs", func(t *testing.T) { testOCMEvaluator(t, true) })
}

// testOCMEvaluator is TestFleetpolicySpokeWithOCMEvaluator on a managed
// cluster with fleetpolicy's CRDs, or with OCM's ConfigurationPolicy and
// OperatorPolicy CRDs when ocmTemplateCRDs.
func testOCMEvaluator(t *testing.T, ocmTemplateCRDs bool) {
	const cluster = "cluster1"
	fleet := testkit.StartFleet(t, 1)
	ctx := context.Background()
	hubClient, managed := fleet.Hub.Client, fleet.Spokes[0].Client
	if ocmTemplateCRDs {
		root := testkit.RepoRoot(t)
		for _, crd := range []string{"policy.open-cluster-management.io_configurationpolicies.yaml", "policy.open-cluster-management.io_operatorpolicies.yaml"} {
			applyFile(t, managed, filepath.Join(root, ocmCRDs, crd), "")
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := managed.Get(ctx, client.ObjectKey{Name: "configurationpolicies.policy.open-cluster-management.io"}, crd); err != nil {
			t.Fatal(err)
		}
		if _, ocms := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["object-templates"].Items.Schema.Properties["recordDiff"]; !ocms {
			t.Fatal("the managed cluster's ConfigurationPolicy CRD is not OCM's (no spec.object-templates[].recordDiff)")
		}
	}
	hubtest.Start(t, fleet.Hub.Config, nil)
	hubCfg, err := clientcmd.BuildConfigFromFlags("", hubIdentity(t, fleet.Hub, cluster))
	if err != nil {
		t.Fatal(err)
	}
	if err := localplane.EnsureNamespace(ctx, managed, cluster); err != nil {
		t.Fatal(err)
	}
	// An OperatorPolicy fleetpolicy's own controller evaluated before the
	// switch, holding its finalizer.
	testkit.Apply(t, managed, fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1beta1
kind: OperatorPolicy
metadata: {name: evaluated-before, namespace: %s, finalizers: [%s]}
spec:
  remediationAction: inform
  complianceType: musthave
  upgradeApproval: None
  subscription: {name: other-operator, namespace: default, channel: stable, source: example-catalog, sourceNamespace: default}
`, cluster, operatorpolicy.Finalizer))
	spoketest.StartWith(t, hubCfg, fleet.Spokes[0].Config, cluster, func(o *spoke.ManagerOptions) {
		o.ConfigurationPolicyEvaluator, o.OperatorPolicyEvaluator = spoke.EvaluatorOCM, spoke.EvaluatorOCM
	})
	args := append([]string{"controller", "--cluster-name=" + cluster, "--leader-elect=false", "--enable-lease=false", "--enable-operator-policy=true"}, listenerFlags(t)...)
	ocm, err := localplane.StartProcess("ocm-config-policy-controller", "ocm-policy-binaries", args,
		[]string{"OSDK_FORCE_RUN_MODE=local", "KUBECONFIG=" + fleet.Spokes[0].KubeconfigPath, "WATCH_NAMESPACE=" + cluster})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ocm.Stop)
	m := managedCluster{name: cluster, client: managed, logs: func() string { return "--- OCM config-policy-controller:\n" + ocm.LogTail(15) }}

	if err := localplane.EnsureNamespace(ctx, hubClient, "interop"); err != nil {
		t.Fatal(err)
	}
	// second depends on first being Compliant; first informs, so OCM's
	// controller finds its ConfigMap missing.
	applyPolicy(t, hubClient, "second", "enforce", "{}",
		"\n  - {apiVersion: policy.open-cluster-management.io/v1, kind: Policy, name: first, compliance: Compliant}", []string{cluster})
	applyInformPolicy(t, hubClient, "first", cluster, `{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy,
        metadata: {name: first-template},
        spec: {remediationAction: inform, pruneObjectBehavior: DeleteIfCreated, object-templates: [{complianceType: musthave,
          objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: first-enforced, namespace: default},
            data: {k: v, secret: '{{hub "s3cr3t" | protect hub}}'}}}]}}`)

	hop(t, m, "spec sync (fleetpolicy spoke: hub replica -> managed cluster Policy)", func() string {
		return errString(managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "interop.first"}, &policyv1.Policy{}))
	})
	hop(t, m, "encryption key copy (fleetpolicy spoke: hub policy-encryption-key -> managed cluster)", func() string {
		return errString(managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "policy-encryption-key"}, &corev1.Secret{}))
	})
	hop(t, m, "template sync (fleetpolicy spoke: Policy -> ConfigurationPolicy owned by it)", func() string {
		cp := &policyv1.ConfigurationPolicy{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "first-template"}, cp); err != nil {
			return err.Error()
		}
		if len(cp.OwnerReferences) == 0 || cp.OwnerReferences[0].Name != "interop.first" {
			return fmt.Sprintf("ownerReferences %v: OCM's controller sends its Events to the first owner", cp.OwnerReferences)
		}
		return ""
	})
	hop(t, m, "inform evaluation (OCM config-policy-controller: first NonCompliant, history kept by fleetpolicy's CRD)", func() string {
		cp := &policyv1.ConfigurationPolicy{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "first-template"}, cp); err != nil {
			return err.Error()
		}
		if cp.Status.ComplianceState != policyv1.NonCompliant || len(cp.Status.History) == 0 {
			return fmt.Sprintf("ConfigurationPolicy status %+v", cp.Status)
		}
		return ""
	})
	hop(t, m, "status to the root (inform NonCompliant, with OCM's compliance Event in the replica's history)", func() string {
		return rootReports(ctx, hubClient, cluster, "first", policyv1.NonCompliant)
	})
	hop(t, m, "dependency gating (fleetpolicy spoke: second Pending, its template absent, while first is NonCompliant)", func() string {
		r := &policyv1.Policy{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "interop.second"}, r); err != nil {
			return err.Error()
		}
		if r.Status.ComplianceState != policyv1.Pending {
			return fmt.Sprintf("replica second status %+v", r.Status)
		}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "second-template"}, &policyv1.ConfigurationPolicy{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("second's ConfigurationPolicy while its dependency is unmet: %v", err)
		}
		return ""
	})
	if err := managed.Get(ctx, client.ObjectKey{Namespace: "default", Name: "first-enforced"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("hop \"inform evaluation\": an inform policy's ConfigMap exists (%v)", err)
	}

	// first enforces now.
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "interop", Name: "first"}}
	if err := hubClient.Patch(ctx, root, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"remediationAction":"enforce"}}`))); err != nil {
		t.Fatal(err)
	}
	hop(t, m, "enforcement (OCM config-policy-controller creates first's ConfigMap, decrypting the protected value with the copied key)", func() string {
		cm := &corev1.ConfigMap{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: "default", Name: "first-enforced"}, cm); err != nil {
			return err.Error()
		}
		if cm.Data["secret"] != "s3cr3t" {
			return fmt.Sprintf("ConfigMap data %v", cm.Data)
		}
		return ""
	})
	hop(t, m, "pruning state kept by fleetpolicy's CRD (OCM's finalizer, createdByPolicy and uid on the related object)", func() string {
		cp := &policyv1.ConfigurationPolicy{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "first-template"}, cp); err != nil {
			return err.Error()
		}
		if !controllerutil.ContainsFinalizer(cp, configpolicy.PruneFinalizer) {
			return fmt.Sprintf("finalizers %v", cp.Finalizers)
		}
		for _, o := range cp.Status.RelatedObjects {
			if o.Properties != nil && o.Properties.CreatedByPolicy != nil && *o.Properties.CreatedByPolicy && o.Properties.UID != "" {
				return ""
			}
		}
		return fmt.Sprintf("relatedObjects %+v", cp.Status.RelatedObjects)
	})
	hop(t, m, "status to the root (enforced first Compliant)", func() string {
		return rootReports(ctx, hubClient, cluster, "first", policyv1.Compliant)
	})
	hop(t, m, "dependency met (fleetpolicy spoke syncs second; OCM config-policy-controller enforces it; Compliant at the root)", func() string {
		if err := managed.Get(ctx, client.ObjectKey{Namespace: "default", Name: "second-enforced"}, &corev1.ConfigMap{}); err != nil {
			return "second's ConfigMap: " + err.Error()
		}
		return rootReports(ctx, hubClient, cluster, "second", policyv1.Compliant)
	})
	for _, template := range []string{"first-template", "second-template"} {
		if msg := onlyOCMEvaluated(ctx, managed, cluster, template); msg != "" {
			t.Fatalf("hop \"fleetpolicy's ConfigurationPolicy evaluator stays off\": %s", msg)
		}
	}

	// An OperatorPolicy: synced by the spoke, evaluated by OCM's controller.
	applyInformPolicy(t, hubClient, "op", cluster, `{apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy,
        metadata: {name: op-template},
        spec: {remediationAction: inform, complianceType: musthave, upgradeApproval: None,
          subscription: {name: example-operator, namespace: default, channel: stable, source: example-catalog, sourceNamespace: default}}}`)
	hop(t, m, "template sync (fleetpolicy spoke: Policy -> OperatorPolicy)", func() string {
		return errString(managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "op-template"}, &v1beta1.OperatorPolicy{}))
	})
	hop(t, m, "OperatorPolicy evaluation (OCM config-policy-controller: NonCompliant without the operator, history kept by fleetpolicy's CRD)", func() string {
		op := &v1beta1.OperatorPolicy{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "op-template"}, op); err != nil {
			return err.Error()
		}
		if op.Status.ComplianceState != policyv1.NonCompliant || len(op.Status.History) == 0 {
			return fmt.Sprintf("OperatorPolicy status %+v", op.Status)
		}
		if controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer) {
			return fmt.Sprintf("fleetpolicy's OperatorPolicy controller set its finalizer: %v", op.Finalizers)
		}
		return ""
	})
	hop(t, m, "status to the root (OperatorPolicy NonCompliant)", func() string {
		return rootReports(ctx, hubClient, cluster, "op", policyv1.NonCompliant)
	})
	if msg := onlyOCMEvaluated(ctx, managed, cluster, "op-template"); msg != "" {
		t.Fatalf("hop \"fleetpolicy's OperatorPolicy evaluator stays off\": %s", msg)
	}
	// fleetpolicy's own spelling (allowedCSVs) is refused, not left for OCM's controller to ignore.
	applyInformPolicy(t, hubClient, "own-spelling-op", cluster, `{apiVersion: policy.open-cluster-management.io/v1beta1, kind: OperatorPolicy,
        metadata: {name: own-spelling-op-template},
        spec: {remediationAction: inform, allowedCSVs: ["*"],
          subscription: {name: own-spelling-operator, namespace: default, channel: stable, source: example-catalog, sourceNamespace: default}}}`)
	hop(t, m, "template error (fleetpolicy spoke refuses an OperatorPolicy in fleetpolicy's spelling that OCM's controller would ignore)", func() string {
		r := &policyv1.Policy{}
		if err := hubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "interop.own-spelling-op"}, r); err != nil {
			return err.Error()
		}
		const want = "spec.allowedCSVs: only fleetpolicy's OperatorPolicy controller understands this"
		if r.Status.ComplianceState != policyv1.NonCompliant || len(r.Status.Details) == 0 || len(r.Status.Details[0].History) == 0 ||
			!strings.Contains(r.Status.Details[0].History[0].Message, want) {
			return fmt.Sprintf("replica own-spelling-op status %+v, want NonCompliant with %q", r.Status, want)
		}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "own-spelling-op-template"}, &v1beta1.OperatorPolicy{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("the refused OperatorPolicy is on the cluster: %v", err)
		}
		return ""
	})
	hop(t, m, "finalizer release (fleetpolicy spoke releases the finalizer its own OperatorPolicy controller set, which nothing handles now)", func() string {
		op := &v1beta1.OperatorPolicy{}
		if err := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "evaluated-before"}, op); err != nil {
			return err.Error()
		}
		if controllerutil.ContainsFinalizer(op, operatorpolicy.Finalizer) {
			return fmt.Sprintf("finalizers %v", op.Finalizers)
		}
		return ""
	})

	// Deleting first's root: template sync deletes the ConfigurationPolicy,
	// OCM's controller prunes the ConfigMap it created and releases its
	// finalizer; second is Pending again.
	if err := hubClient.Delete(ctx, root); err != nil {
		t.Fatal(err)
	}
	hop(t, m, "root deletion and pruning (fleetpolicy spoke deletes the template; OCM config-policy-controller deletes the ConfigMap it created)", func() string {
		cpErr := managed.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "first-template"}, &policyv1.ConfigurationPolicy{})
		cmErr := managed.Get(ctx, client.ObjectKey{Namespace: "default", Name: "first-enforced"}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(cpErr) || !apierrors.IsNotFound(cmErr) {
			return fmt.Sprintf("ConfigurationPolicy: %v; ConfigMap: %v", cpErr, cmErr)
		}
		return ""
	})
}

// applyInformPolicy applies, in namespace interop, an inform Policy name whose
// one template is objectDefinition (a YAML flow mapping), bound to a Placement
// name that decides cluster.
func applyInformPolicy(t *testing.T, c client.Client, name, cluster, objectDefinition string) {
	t.Helper()
	applyBoundPolicy(t, c, name, `
  remediationAction: inform
  policy-templates:
  - objectDefinition: `+objectDefinition+"\n", []string{cluster})
}

// rootReports says what is missing for root policy name in namespace interop
// to report state for cluster, with the replica's history holding a
// compliance Event of OCM's config-policy-controller; "" when it does.
func rootReports(ctx context.Context, hubClient client.Client, cluster, name string, state policyv1.ComplianceState) string {
	replica := &policyv1.Policy{}
	if err := hubClient.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "interop." + name}, replica); err != nil {
		return err.Error()
	}
	s := replica.Status
	if s.ComplianceState != state || len(s.Details) == 0 || len(s.Details[0].History) == 0 ||
		!strings.HasPrefix(s.Details[0].History[0].Message, string(state)+";") {
		return fmt.Sprintf("replica %s status %+v", name, s)
	}
	root := &policyv1.Policy{}
	if err := hubClient.Get(ctx, client.ObjectKey{Namespace: "interop", Name: name}, root); err != nil {
		return err.Error()
	}
	for _, c := range root.Status.Status {
		if c.ClusterName == cluster && c.ComplianceState == state && root.Status.ComplianceState == state {
			return ""
		}
	}
	return fmt.Sprintf("root %s status %+v", name, root.Status)
}

// onlyOCMEvaluated says what is wrong when the compliance Events about
// template on the managed cluster (its evaluations: not template sync's
// Pending and template-error Events) are not all OCM's config-policy-
// controller's, or there is none; "" when they are.
func onlyOCMEvaluated(ctx context.Context, managed client.Client, cluster, template string) string {
	events := &corev1.EventList{}
	if err := managed.List(ctx, events, client.InNamespace(cluster)); err != nil {
		return err.Error()
	}
	ocm := 0
	for _, e := range events.Items {
		if name, ok := history.TemplateOf(e.Reason); !ok || name != template ||
			strings.HasPrefix(e.Message, string(policyv1.Pending)+";") || strings.HasPrefix(e.Message, "template-error;") {
			continue
		}
		if e.Source.Component != ocmControllerComponent {
			return fmt.Sprintf("compliance Event %s about %s from %q: %s", e.Name, template, e.Source.Component, e.Message)
		}
		ocm++
	}
	if ocm == 0 {
		return fmt.Sprintf("no compliance Event about %s from %s", template, ocmControllerComponent)
	}
	return ""
}

// TestOCMEvaluatorSettingsRefused: the spoke refuses an evaluator it does not
// know, and OperatorPolicies left to OCM's config-policy-controller while the
// spoke evaluates ConfigurationPolicies (OCM's controller would evaluate them
// too), naming the setting; both are refused before any API server is reached.
func TestOCMEvaluatorSettingsRefused(t *testing.T) {
	tests := []struct {
		name                    string
		configuration, operator spoke.Evaluator
		want                    string
	}{
		{"unknown ConfigurationPolicy evaluator", "gatekeeper", spoke.EvaluatorFleetpolicy, `--configurationpolicy-evaluator): "gatekeeper" is not an evaluator`},
		{"unknown OperatorPolicy evaluator", spoke.EvaluatorOCM, "", `--operatorpolicy-evaluator): "" is not an evaluator`},
		{"OperatorPolicies alone to OCM", spoke.EvaluatorFleetpolicy, spoke.EvaluatorOCM, "needs ConfigurationPolicyEvaluator (--configurationpolicy-evaluator) ocm too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := spoke.DefaultManagerOptions()
			o.ClusterName = "cluster1"
			o.ConfigurationPolicyEvaluator, o.OperatorPolicyEvaluator = tt.configuration, tt.operator
			unreachable := &rest.Config{Host: "https://127.0.0.1:1"}
			_, err := spoke.NewManager(context.Background(), unreachable, unreachable, o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewManager: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
