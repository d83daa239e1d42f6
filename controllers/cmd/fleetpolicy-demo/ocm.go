package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

// The fleetpolicy OCM add-on as manifests/addon names it (docs/ocm-addon.md).
const (
	addonName       = "fleetpolicy"
	addonNamespace  = "fleetpolicy-system"
	addonDeployment = "fleetpolicy-spoke"
	// addonSecret is the add-on's hub kubeconfig, written by OCM's
	// registration agent on the managed cluster (OCM's default name).
	addonSecret = "fleetpolicy-hub-kubeconfig"
	// addonFleetwide is the kustomization the demo applies on the hub: the
	// add-on, enabled by a Placement on every cluster of the global set.
	addonFleetwide = "manifests/addon-fleetwide"
)

// managedClusterCRDPaths are the CRDs each managed cluster starts with: what
// OCM's klusterlet brings, and OLM's API (the demo's clusters run OLM, which
// the OperatorPolicy part of the story governs). fleetpolicy's CRDs arrive
// with its add-on.
var managedClusterCRDPaths = append(append([]string{}, localplane.ManagedClusterCRDPaths...), "manifests/crds/olm")

// ocmScheme is fleetpolicy's scheme with the OCM APIs the demo reads and
// writes besides: ClusterClaims and ManifestWorks.
func ocmScheme() *runtime.Scheme {
	s := scheme.New()
	utilruntime.Must(clusterv1alpha1.Install(s))
	utilruntime.Must(workv1.Install(s))
	return s
}

// joining is what the demo shows of one cluster once it joined.
type joining struct {
	cluster string
	took    time.Duration
	lines   []string
}

// joinCluster makes the example's ManagedCluster mc a real member of the OCM
// fleet: its status.clusterClaims become ClusterClaims on the managed cluster
// (which its registration agent reports to the hub: see reportJoin), the
// cluster joins through OCM registration (bootstrap token, CSR, accepted as
// `clusteradm accept` does), and its labels are set on the ManagedCluster the
// hub now holds.
func (d *demo) joinCluster(ctx context.Context, mc *clusterv1.ManagedCluster) (joining, error) {
	name := mc.Name
	out := joining{cluster: name}
	managed, err := client.New(d.spokes[name].Config, client.Options{Scheme: d.scheme})
	if err != nil {
		return out, err
	}
	for _, claim := range mc.Status.ClusterClaims {
		cc := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: claim.Name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: claim.Value}}
		if err := managed.Create(ctx, cc); err != nil && !apierrors.IsAlreadyExists(err) {
			return out, fmt.Errorf("ClusterClaim %s on %s: %w", claim.Name, name, err)
		}
	}
	start := time.Now()
	if _, err := d.ocm.Join(ctx, d.spokes[name], name); err != nil {
		return out, fmt.Errorf("%s joining the hub: %w\n%s", name, err, d.ocm.LogTails(20))
	}
	out.took = time.Since(start)
	if len(mc.Labels) > 0 {
		// A merge patch of the labels alone: a typed object would also
		// send spec.hubAcceptsClient=false, and the hub would deny the
		// cluster.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": mc.Labels}})
		if err != nil {
			return out, err
		}
		target := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := d.hubC.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return out, fmt.Errorf("labelling ManagedCluster %s: %w", name, err)
		}
	}
	return out, nil
}

// reportJoin waits for the hub to show the claims of the example's
// ManagedCluster mc, which the cluster's registration agent reports, and adds
// to j how the cluster joined: its conditions on the hub, its accepted CSR,
// its labels and claims.
func (d *demo) reportJoin(ctx context.Context, mc *clusterv1.ManagedCluster, j *joining) error {
	name := mc.Name
	hubMC := &clusterv1.ManagedCluster{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := d.hubC.Get(ctx, client.ObjectKey{Name: name}, hubMC); err != nil {
			return false, err
		}
		for _, want := range mc.Status.ClusterClaims {
			if !slices.Contains(hubMC.Status.ClusterClaims, want) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s's registration agent to report its ClusterClaims %v (the hub has %v): %w",
			name, mc.Status.ClusterClaims, hubMC.Status.ClusterClaims, err)
	}

	var conds []string
	for _, t := range []string{clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
		if c := meta.FindStatusCondition(hubMC.Status.Conditions, t); c != nil {
			conds = append(conds, conditionText(*c))
		}
	}
	j.lines = append(j.lines, fmt.Sprintf("joined in %s: %s", j.took.Round(100*time.Millisecond), strings.Join(conds, " ")))
	csr, err := d.clusterCSR(ctx, name)
	if err != nil {
		return err
	}
	j.lines = append(j.lines, csr)
	var labels, claims []string
	for _, k := range slices.Sorted(maps.Keys(mc.Labels)) {
		labels = append(labels, k+"="+mc.Labels[k])
	}
	for _, c := range mc.Status.ClusterClaims {
		claims = append(claims, c.Name+"="+c.Value)
	}
	j.lines = append(j.lines, fmt.Sprintf("labels %s set on the hub; claims %s reported by its registration agent (ClusterClaims)",
		strings.Join(labels, ","), strings.Join(claims, ",")))
	return nil
}

// clusterCSR describes the cluster's accepted CSR: who asked, who approved,
// and the certificate kube-controller-manager's signer issued.
func (d *demo) clusterCSR(ctx context.Context, cluster string) (string, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := d.hubC.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: cluster}); err != nil {
		return "", err
	}
	for _, csr := range list.Items {
		if csr.Labels[addonv1alpha1.AddonLabelKey] != "" {
			continue // an add-on's
		}
		var approved string
		for _, c := range csr.Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
				approved = c.Reason
			}
		}
		if approved == "" {
			continue
		}
		return fmt.Sprintf("CSR %s from %s approved (%s)\n%17s signed (%s): %s",
			csr.Name, csr.Spec.Username, approved, "", csr.Spec.SignerName, certificateText(csr.Status.Certificate)), nil
	}
	return "", fmt.Errorf("no approved CSR of %s on the hub", cluster)
}

// addonArrival is what the demo shows of the add-on on one cluster.
type addonArrival struct {
	cluster string
	lines   []string
	hubCfg  *rest.Config
}

// waitAddOn waits for the fleetpolicy add-on to arrive on cluster as OCM
// delivers it: its ManifestWork applied by the cluster's work agent (the
// policy CRDs, established; the namespace, RBAC and Deployment) and the hub
// kubeconfig OCM registration issued to it; the ManagedClusterAddOn saying
// both. It then projects that kubeconfig's Secret into dir, as a kubelet
// would for the Deployment's pod, and returns the hub rest.Config built from
// it.
func (d *demo) waitAddOn(ctx context.Context, cluster, dir string) (addonArrival, error) {
	out := addonArrival{cluster: cluster}
	managed := d.spokes[cluster].Client
	var works []workv1.ManifestWork
	var problem string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		problem = d.addonProblem(ctx, cluster, managed, &works)
		return problem == "", nil
	})
	if err != nil {
		return out, fmt.Errorf("waiting for the fleetpolicy add-on on %s (%s): %w\n%s", cluster, problem, err, d.ocm.LogTails(20))
	}
	for _, w := range works {
		kinds := map[string]int{}
		for _, m := range w.Status.ResourceStatus.Manifests {
			if meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestApplied) {
				kinds[m.ResourceMeta.Kind]++
			}
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(kinds)) {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
		out.lines = append(out.lines, fmt.Sprintf("ManifestWork %s applied by the work agent: %s", w.Name, strings.Join(parts, ", ")))
	}

	if err := localplane.ProjectSecret(d.ctx, managed, addonNamespace, addonSecret, dir, time.Second); err != nil {
		return out, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return out, fmt.Errorf("the add-on's hub kubeconfig on %s: %w", cluster, err)
	}
	// OCM writes the certificate's paths relative (tls.crt, tls.key), and
	// clientcmd resolves them against the kubeconfig's directory: the
	// projected files, which client-go reads again when OCM rotates them.
	if cfg.CertFile != filepath.Join(dir, "tls.crt") || cfg.KeyFile != filepath.Join(dir, "tls.key") {
		return out, fmt.Errorf("the add-on's hub kubeconfig on %s names certificate %q and key %q, not the projected files of %s", cluster, cfg.CertFile, cfg.KeyFile, dir)
	}
	secret := &corev1.Secret{}
	if err := managed.Get(ctx, client.ObjectKey{Namespace: addonNamespace, Name: addonSecret}, secret); err != nil {
		return out, err
	}
	out.lines = append(out.lines, fmt.Sprintf("Secret %s/%s issued by OCM registration: %s", addonNamespace, addonSecret, certificateText(secret.Data["tls.crt"])))
	out.hubCfg = cfg
	return out, nil
}

// addonProblem says what the add-on on cluster still lacks, "" when nothing;
// works receives its ManifestWorks.
func (d *demo) addonProblem(ctx context.Context, cluster string, managed client.Client, works *[]workv1.ManifestWork) string {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := d.hubC.Get(ctx, client.ObjectKey{Namespace: cluster, Name: addonName}, mca); err != nil {
		return "ManagedClusterAddOn: " + err.Error()
	}
	list := &workv1.ManifestWorkList{}
	if err := d.hubC.List(ctx, list, client.InNamespace(cluster), client.MatchingLabels{addonv1alpha1.AddonLabelKey: addonName}); err != nil {
		return "ManifestWorks: " + err.Error()
	}
	if len(list.Items) == 0 {
		return "no ManifestWork yet"
	}
	for _, w := range list.Items {
		if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) {
			return "ManifestWork " + w.Name + " not applied yet"
		}
	}
	*works = list.Items
	for _, crd := range []string{"policies", "configurationpolicies", "operatorpolicies"} {
		obj := &apiextensionsv1.CustomResourceDefinition{}
		if err := managed.Get(ctx, client.ObjectKey{Name: crd + ".policy.open-cluster-management.io"}, obj); err != nil {
			return "CRD " + crd + ": " + err.Error()
		}
		established := false
		for _, c := range obj.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			return "CRD " + crd + " not established yet"
		}
	}
	secret := &corev1.Secret{}
	if err := managed.Get(ctx, client.ObjectKey{Namespace: addonNamespace, Name: addonSecret}, secret); err != nil {
		return "hub kubeconfig: " + err.Error()
	}
	if len(secret.Data["tls.crt"]) == 0 || len(secret.Data["kubeconfig"]) == 0 {
		return "hub kubeconfig: no certificate yet"
	}
	for _, t := range []string{addonv1alpha1.ManagedClusterAddOnManifestApplied, addonv1alpha1.ManagedClusterAddOnRegistrationApplied} {
		if !meta.IsStatusConditionTrue(mca.Status.Conditions, t) {
			return "ManagedClusterAddOn condition " + t + " not true yet"
		}
	}
	return ""
}

// addonHealth prints each cluster's ManagedClusterAddOn conditions as OCM
// reports them.
// It first gives OCM's addon manager a few seconds to settle them (no
// rollout in progress, health judged on the applied ManifestWork).
func (d *demo) addonHealth(ctx context.Context, clusters []string) error {
	addons := make([]*addonv1alpha1.ManagedClusterAddOn, len(clusters))
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		for i, c := range clusters {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			if err := d.hubC.Get(ctx, client.ObjectKey{Namespace: c, Name: addonName}, mca); err != nil {
				return false, nil
			}
			addons[i] = mca
		}
		for _, mca := range addons {
			progressing := meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
			health := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
			if progressing || health == nil || health.Reason == addonv1alpha1.AddonAvailableReasonWorkNotApply {
				return false, nil
			}
		}
		return true, nil
	})
	available := 0
	for i, c := range clusters {
		mca := addons[i]
		if mca == nil {
			return fmt.Errorf("no ManagedClusterAddOn %s/%s on the hub", c, addonName)
		}
		var parts []string
		var availability string
		for _, cond := range byConditionOrder(mca.Status.Conditions) {
			if cond.Type != addonv1alpha1.ManagedClusterAddOnConditionAvailable {
				parts = append(parts, conditionText(cond))
				continue
			}
			if cond.Status == metav1.ConditionTrue {
				available++
			}
			availability = conditionText(cond)
			if cond.Message != "" {
				availability += ": " + shorten(cond.Message, 90)
			}
		}
		if availability == "" {
			availability = "Available not reported"
		}
		fmt.Fprintf(d.out, "    %-13s %s\n", c, strings.Join(parts, " "))
		fmt.Fprintf(d.out, "    %-13s %s\n", "", availability)
	}
	if available < len(clusters) {
		fmt.Fprintf(d.out, "    Available is not True: OCM judges the add-on by its Deployment's status, which the work agent feeds\n"+
			"    back, and no kubelet runs the Deployment's pod here. The demo runs each cluster's spoke in-process\n"+
			"    instead, with the hub kubeconfig OCM issued to its add-on; `make e2e` runs fleetpolicy as real pods.\n")
	}
	return nil
}

// addonConditionOrder is the order the demo shows a ManagedClusterAddOn's
// conditions in: how it was delivered first, its health (Available) last;
// others in between.
var addonConditionOrder = []string{
	addonv1alpha1.ManagedClusterAddOnManifestApplied,
	addonv1alpha1.ManagedClusterAddOnRegistrationApplied,
	"ClusterCertificateRotated", // OCM registration's; the API names no constant
	addonv1alpha1.ManagedClusterAddOnConditionConfigured,
	addonv1alpha1.ManagedClusterAddOnConditionProgressing,
}

// byConditionOrder sorts conditions by addonConditionOrder, Available last.
func byConditionOrder(conds []metav1.Condition) []metav1.Condition {
	rank := func(t string) int {
		if t == addonv1alpha1.ManagedClusterAddOnConditionAvailable {
			return len(addonConditionOrder) + 1
		}
		if i := slices.Index(addonConditionOrder, t); i >= 0 {
			return i
		}
		return len(addonConditionOrder)
	}
	out := slices.Clone(conds)
	slices.SortStableFunc(out, func(a, b metav1.Condition) int { return rank(a.Type) - rank(b.Type) })
	return out
}

// conditionText is a condition as Type=Status(Reason).
func conditionText(c metav1.Condition) string {
	return fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason)
}

// certificateText names the subject, groups and expiry of a PEM certificate.
func certificateText(pemData []byte) string {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return "no certificate"
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "unreadable certificate: " + err.Error()
	}
	return fmt.Sprintf("CN=%s O=%s, valid until %s", cert.Subject.CommonName,
		strings.Join(cert.Subject.Organization, ","), cert.NotAfter.UTC().Format("2006-01-02"))
}

// applyAddOn renders manifests/addon-fleetwide with bin/kustomize and applies
// it on the hub.
func (d *demo) applyAddOn(ctx context.Context) error {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(d.root, "bin", "kustomize"), "build", filepath.Join(d.root, addonFleetwide))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kustomize build %s: %v\n%s", addonFleetwide, err, stderr.String())
	}
	objs, err := localplane.ReadManifests(addonFleetwide, &stdout)
	if err != nil {
		return err
	}
	if _, err := localplane.Apply(ctx, d.hubC, objs); err != nil {
		return err
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	fmt.Fprintf(d.out, "    %d objects: %v\n", len(objs), kinds)
	return nil
}

// managedClusters are the example's ManagedClusters, typed.
func managedClusters(objs []*unstructured.Unstructured) ([]*clusterv1.ManagedCluster, error) {
	var out []*clusterv1.ManagedCluster
	for _, o := range objs {
		if o.GetKind() != "ManagedCluster" {
			continue
		}
		mc := &clusterv1.ManagedCluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, mc); err != nil {
			return nil, fmt.Errorf("ManagedCluster %s: %w", o.GetName(), err)
		}
		out = append(out, mc)
	}
	return out, nil
}
