package localplane

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OCMHubNamespace is the namespace of OCM's hub controllers (registration,
// addon manager, placement), as OCM's cluster manager installs them.
const OCMHubNamespace = OCMPlacementNamespace

// OCMAgentNamespace is the namespace of OCM's agents on a managed cluster,
// where the registration agent keeps the cluster's hub kubeconfig.
const OCMAgentNamespace = "open-cluster-management-agent"

// ocmCoreCRDs is where `make generate` copies OCM's add-on and work CRDs.
const ocmCoreCRDs = "controllers/internal/localplane/testdata/ocm-core"

// OCMHubCRDPaths are the CRDs of a plane that is an OCM hub: fleetpolicy's,
// OCM's cluster, add-on and work APIs, OLM's.
var OCMHubCRDPaths = append(append([]string{}, CRDDirs...), ocmCoreCRDs)

// ManagedClusterCRDPaths are the CRDs of a managed cluster before anything is
// installed on it but OCM's agents (what a klusterlet brings): ClusterClaims
// and AppliedManifestWorks. fleetpolicy's CRDs come with its add-on.
var ManagedClusterCRDPaths = []string{
	"manifests/crds/ocm/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml",
	ocmCoreCRDs + "/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml",
}

// OCMHubOptions tune an OCM hub.
type OCMHubOptions struct {
	// SigningDuration is the lifetime of every certificate the hub signs for
	// clusters and add-ons (kube-controller-manager --cluster-signing-duration);
	// 0 keeps kube-controller-manager's default, a year. OCM's agents renew a
	// certificate when a fifth to a quarter of its life is left.
	SigningDuration time.Duration
}

// quickRotation is the signing duration below which Join nudges the agents'
// certificate checks (nudgeCertificates): OCM's registration agent looks at a
// certificate's age when its Secret changes and every five minutes
// (ControllerResyncInterval, which OCM's own integration tests shorten), so a
// certificate must live well over five minutes past its renewal point to be
// renewed unaided.
const quickRotation = 30 * time.Minute

// OCMHub is OCM's hub on a plane, each component the real binary `make
// ocm-core` builds: kube-controller-manager (the kubernetes.io/kube-apiserver-client
// CSR signer, the garbage collector OCM's add-on removal relies on, namespace
// deletion), OCM's registration controller, addon manager and placement
// controller. Clusters join it with Join, as a klusterlet does.
type OCMHub struct {
	Plane                 *Plane
	KubeControllerManager *Process
	Registration          *Process
	AddonManager          *Process
	Placement             *OCMPlacement

	opts                OCMHubOptions
	bootstrapKubeconfig []byte
	// mu guards klusterlets: clusters may join at once.
	mu          sync.Mutex
	klusterlets []*Klusterlet
}

// StartOCMHub makes plane p (started with OCMHubCRDPaths) an OCM hub. The
// signer's CA is added to the API server's client CA bundle, as a real hub's
// --client-ca-file trusts the certificates its kube-controller-manager signs.
// On a plane of Attach (a real cluster) the cluster's own
// kube-controller-manager signs and collects garbage, and none is started.
// Stop ends every process it started, and those of the clusters that joined.
func StartOCMHub(ctx context.Context, p *Plane, opts OCMHubOptions) (hub *OCMHub, err error) {
	h := &OCMHub{Plane: p, opts: opts}
	defer func() {
		if err != nil {
			h.Stop()
		}
	}()
	if p.attached {
		// The cluster's own kube-controller-manager signs and collects.
		if opts.SigningDuration > 0 {
			return nil, errors.New("localplane: SigningDuration is the attached cluster's kube-controller-manager's to set")
		}
	} else if err := h.startSigner(); err != nil {
		return nil, err
	}
	for _, ns := range []string{OCMHubNamespace, ocmBootstrapNamespace} {
		if err := EnsureNamespace(ctx, p.Client, ns); err != nil {
			return nil, err
		}
	}
	if h.bootstrapKubeconfig, err = bootstrapKubeconfig(ctx, p); err != nil {
		return nil, err
	}
	if h.Registration, err = startOCMController(p, "ocm-registration", "controller"); err != nil {
		return nil, err
	}
	if h.AddonManager, err = startOCMController(p, "ocm-addon", "manager"); err != nil {
		return nil, err
	}
	if h.Placement, err = StartOCMPlacement(ctx, p); err != nil {
		return nil, err
	}
	return h, nil
}

// startSigner starts the hub's kube-controller-manager: the
// kubernetes.io/kube-apiserver-client CSR signer with a CA the API server
// trusts (trustNewSigner), the garbage collector, namespace deletion.
func (h *OCMHub) startSigner() error {
	signer, err := h.trustNewSigner()
	if err != nil {
		return err
	}
	kcmArgs := []string{
		"--controllers=certificatesigningrequest-signing-controller,garbage-collector-controller,namespace-controller",
		"--cluster-signing-kube-apiserver-client-cert-file=" + signer.certFile,
		"--cluster-signing-kube-apiserver-client-key-file=" + signer.keyFile,
	}
	if h.opts.SigningDuration > 0 {
		kcmArgs = append(kcmArgs, "--cluster-signing-duration="+h.opts.SigningDuration.String())
	}
	h.KubeControllerManager, err = startKubeControllerManager(h.Plane, kcmArgs...)
	return err
}

// startOCMController starts the hub controller of an OCM binary (registration
// controller, addon manager) against p, without leader election.
func startOCMController(p *Plane, binary, command string) (*Process, error) {
	listen, err := FreeAddress()
	if err != nil {
		return nil, err
	}
	return StartProcess(binary, "ocm-core", []string{command, "--kubeconfig", p.KubeconfigPath,
		"--namespace", OCMHubNamespace, "--disable-leader-election", "--listen", listen},
		[]string{"POD_NAMESPACE=" + OCMHubNamespace})
}

// startKubeControllerManager starts kube-controller-manager against p with
// the controllers and flags of args, serving nothing.
func startKubeControllerManager(p *Plane, args ...string) (*Process, error) {
	return StartProcess("kube-controller-manager", "ocm-core", append([]string{
		"--kubeconfig=" + p.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
	}, args...), nil)
}

// Stop ends the hub's processes and those of every cluster that joined.
func (h *OCMHub) Stop() {
	for _, k := range h.joined() {
		k.Stop()
	}
	for _, proc := range []*Process{h.AddonManager, h.Registration, h.KubeControllerManager} {
		if proc != nil {
			proc.Stop()
		}
	}
	if h.Placement != nil {
		h.Placement.Stop()
	}
}

// LogTails is the last lines of each process of the hub and its klusterlets,
// for a failing test's report.
func (h *OCMHub) LogTails(lines int) string {
	var b strings.Builder
	tail := func(name string, proc *Process) {
		if proc != nil {
			fmt.Fprintf(&b, "--- %s:\n%s\n", name, proc.LogTail(lines))
		}
	}
	tail("hub kube-controller-manager", h.KubeControllerManager)
	tail("hub registration controller", h.Registration)
	tail("hub addon manager", h.AddonManager)
	if h.Placement != nil {
		tail("hub placement controller", h.Placement.Process)
	}
	for _, k := range h.joined() {
		tail(k.ClusterName+" registration agent", k.Registration)
		tail(k.ClusterName+" work agent", k.Work)
		tail(k.ClusterName+" kube-controller-manager", k.KubeControllerManager)
	}
	return b.String()
}

// joined is every klusterlet Join started.
func (h *OCMHub) joined() []*Klusterlet {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Klusterlet(nil), h.klusterlets...)
}

// signerFiles are the CA certificate and key of the hub's CSR signer.
type signerFiles struct{ certFile, keyFile string }

// trustNewSigner makes a CA for kube-controller-manager's
// kubernetes.io/kube-apiserver-client signer and adds it to the API server's
// client CA bundle, which the API server reloads when it changes.
func (h *OCMHub) trustNewSigner() (signerFiles, error) {
	dir := filepath.Join(h.Plane.dir, "signer")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return signerFiles{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return signerFiles{}, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "fleetpolicy-localplane-" + h.Plane.Name + "-client-signer"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return signerFiles{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return signerFiles{}, err
	}
	files := signerFiles{certFile: filepath.Join(dir, "ca.crt"), keyFile: filepath.Join(dir, "ca.key")}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(files.certFile, caPEM, 0o600); err != nil {
		return signerFiles{}, err
	}
	if err := os.WriteFile(files.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return signerFiles{}, err
	}
	bundle, err := os.ReadFile(h.Plane.clientCAFile)
	if err != nil {
		return signerFiles{}, fmt.Errorf("the API server's client CA bundle: %w", err)
	}
	if err := writeFileAtomically(h.Plane.clientCAFile, append(append(bundle, '\n'), caPEM...)); err != nil {
		return signerFiles{}, err
	}
	return files, nil
}

// writeFileAtomically replaces path's content in one rename, as a reader
// that reloads the file must never see half of it.
func writeFileAtomically(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// OCM's bootstrap identity, as `clusteradm init` creates it: a ServiceAccount
// whose token a klusterlet joins with, allowed to create its ManagedCluster
// and the CSR of its first certificate and nothing else.
const (
	ocmBootstrapNamespace      = "open-cluster-management"
	ocmBootstrapServiceAccount = "agent-registration-bootstrap"
	ocmBootstrapRBAC           = "controllers/internal/localplane/testdata/ocm-bootstrap.yaml"
)

// bootstrapKubeconfig applies the bootstrap RBAC and returns a kubeconfig
// with a token of the bootstrap ServiceAccount.
func bootstrapKubeconfig(ctx context.Context, p *Plane) ([]byte, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	objs, err := ReadManifestFile(filepath.Join(root, ocmBootstrapRBAC))
	if err != nil {
		return nil, err
	}
	if _, err := Apply(ctx, p.Client, objs); err != nil {
		return nil, err
	}
	token, err := ServiceAccountToken(ctx, p.Client, ocmBootstrapNamespace, ocmBootstrapServiceAccount)
	if err != nil {
		return nil, err
	}
	return TokenKubeconfig(p, "bootstrap", token)
}

// TokenKubeconfig is a kubeconfig reaching p as user with a bearer token.
func TokenKubeconfig(p *Plane, user, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[p.Name] = &clientcmdapi.Cluster{Server: p.Config.Host, CertificateAuthorityData: p.Config.CAData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: p.Name, AuthInfo: user}
	cfg.CurrentContext = user
	return clientcmd.Write(*cfg)
}

// Klusterlet is OCM's agent on one managed cluster (a plane started with
// ManagedClusterCRDPaths): the registration agent, which joined the hub with
// the bootstrap token and keeps the cluster's certificate and its add-ons'
// hub credentials, and the work agent, which applies the hub's ManifestWorks.
// A kube-controller-manager deletes namespaces and collects garbage on the
// cluster, as on a real one.
type Klusterlet struct {
	ClusterName           string
	Plane                 *Plane
	Registration          *Process
	Work                  *Process
	KubeControllerManager *Process
	// HubKubeconfigDir holds the cluster's hub kubeconfig, written by the
	// registration agent.
	HubKubeconfigDir string

	stopNudging context.CancelFunc
}

// Join makes managed an OCM managed cluster named clusterName: it starts the
// registration agent with the bootstrap kubeconfig, accepts the cluster on the
// hub as `clusteradm accept` does (approves its CSR, sets hubAcceptsClient),
// starts the work agent with the hub kubeconfig registration wrote, and
// returns once the ManagedCluster is Joined and Available. Several clusters
// may join at once.
func (h *OCMHub) Join(ctx context.Context, managed *Plane, clusterName string) (k *Klusterlet, err error) {
	k = &Klusterlet{ClusterName: clusterName, Plane: managed}
	h.mu.Lock()
	h.klusterlets = append(h.klusterlets, k)
	h.mu.Unlock()
	dir := filepath.Join(managed.dir, "klusterlet-"+clusterName)
	k.HubKubeconfigDir = filepath.Join(dir, "hub-kubeconfig")
	if err := os.MkdirAll(k.HubKubeconfigDir, 0o700); err != nil {
		return nil, err
	}
	bootstrap := filepath.Join(dir, "bootstrap-kubeconfig")
	if err := os.WriteFile(bootstrap, h.bootstrapKubeconfig, 0o600); err != nil {
		return nil, err
	}
	if err := EnsureNamespace(ctx, managed.Client, OCMAgentNamespace); err != nil {
		return nil, err
	}
	if !managed.attached {
		if k.KubeControllerManager, err = startKubeControllerManager(managed,
			"--controllers=garbage-collector-controller,namespace-controller"); err != nil {
			return nil, err
		}
	}
	listen, err := FreeAddress()
	if err != nil {
		return nil, err
	}
	if k.Registration, err = StartProcess("ocm-registration", "ocm-core", []string{"agent",
		"--cluster-name=" + clusterName,
		"--bootstrap-kubeconfig=" + bootstrap,
		"--hub-kubeconfig-dir=" + k.HubKubeconfigDir,
		"--spoke-external-server-urls=" + managed.Config.Host,
		"--kubeconfig=" + managed.KubeconfigPath,
		"--namespace=" + OCMAgentNamespace,
		"--disable-leader-election", "--listen=" + listen,
	}, []string{"POD_NAMESPACE=" + OCMAgentNamespace}); err != nil {
		return nil, err
	}
	if err := h.accept(ctx, clusterName, k.Registration); err != nil {
		return nil, err
	}
	if h.opts.SigningDuration > 0 && h.opts.SigningDuration < quickRotation {
		var nudging context.Context
		nudging, k.stopNudging = context.WithCancel(context.Background())
		go nudgeCertificates(nudging, managed.Client, 10*time.Second)
	}
	hubKubeconfig := filepath.Join(k.HubKubeconfigDir, "kubeconfig")
	if err := waitUntil(ctx, 2*time.Minute, "the registration agent to write "+hubKubeconfig, func() (bool, error) {
		_, err := os.Stat(hubKubeconfig)
		return err == nil, nil
	}, k.Registration); err != nil {
		return nil, err
	}
	if listen, err = FreeAddress(); err != nil {
		return nil, err
	}
	if k.Work, err = StartProcess("ocm-work", "ocm-core", []string{"agent",
		"--spoke-cluster-name=" + clusterName,
		"--hub-kubeconfig=" + hubKubeconfig,
		"--workload-source-config=" + hubKubeconfig,
		"--kubeconfig=" + managed.KubeconfigPath,
		"--namespace=" + OCMAgentNamespace,
		"--disable-leader-election", "--listen=" + listen,
	}, []string{"POD_NAMESPACE=" + OCMAgentNamespace}); err != nil {
		return nil, err
	}
	err = waitUntil(ctx, 2*time.Minute, "ManagedCluster "+clusterName+" to be Joined and Available", func() (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := h.Plane.Client.Get(ctx, client.ObjectKey{Name: clusterName}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	}, k.Registration, k.Work)
	return k, err
}

// accept waits for the cluster's ManagedCluster and first CSR and accepts
// both, as `clusteradm accept --clusters <name>` does.
func (h *OCMHub) accept(ctx context.Context, clusterName string, agent *Process) error {
	cs, err := kubernetes.NewForConfig(h.Plane.Config)
	if err != nil {
		return err
	}
	var csr *certificatesv1.CertificateSigningRequest
	err = waitUntil(ctx, 2*time.Minute, "the CSR and ManagedCluster of "+clusterName, func() (bool, error) {
		csrs, err := cs.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
			LabelSelector: clusterv1.ClusterNameLabelKey + "=" + clusterName,
		})
		if err != nil {
			return false, err
		}
		for i := range csrs.Items {
			if len(csrs.Items[i].Status.Conditions) == 0 {
				csr = &csrs.Items[i]
			}
		}
		err = h.Plane.Client.Get(ctx, client.ObjectKey{Name: clusterName}, &clusterv1.ManagedCluster{})
		return csr != nil && err == nil, client.IgnoreNotFound(err)
	}, agent)
	if err != nil {
		return err
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "AcceptedByLocalplane", Message: "the cluster was accepted as clusteradm accept does",
	})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approving CSR %s of %s: %w", csr.Name, clusterName, err)
	}
	patch := []byte(`{"spec":{"hubAcceptsClient":true}}`)
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}
	if err := h.Plane.Client.Patch(ctx, mc, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return fmt.Errorf("accepting ManagedCluster %s: %w", clusterName, err)
	}
	return nil
}

// Stop ends the klusterlet's processes.
func (k *Klusterlet) Stop() {
	if k.stopNudging != nil {
		k.stopNudging()
	}
	for _, proc := range []*Process{k.Work, k.Registration, k.KubeControllerManager} {
		if proc != nil {
			proc.Stop()
		}
	}
}

// nudgeCertificates makes the registration agent look at its certificates
// every interval instead of every five minutes (see quickRotation): it
// annotates each Secret the agent keeps a client certificate in (the
// cluster's hub kubeconfig and every add-on's: a tls.crt and the cluster-name
// the agent writes beside it), which the agent watches. The agent decides
// whether to renew, as always.
func nudgeCertificates(ctx context.Context, c client.Client, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		secrets := &corev1.SecretList{}
		if err := c.List(ctx, secrets); err != nil {
			continue
		}
		for i := range secrets.Items {
			s := &secrets.Items[i]
			if len(s.Data["tls.crt"]) == 0 || len(s.Data["cluster-name"]) == 0 {
				continue
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"localplane.fleetpolicy.io/nudged":%q}}}`, time.Now().Format(time.RFC3339Nano))
			_ = c.Patch(ctx, s, client.RawPatch("application/merge-patch+json", []byte(patch)))
		}
	}
}

// waitUntil polls done every 250ms until it is true, it fails, timeout passes
// or one of procs exits (naming it, with its last lines).
func waitUntil(ctx context.Context, timeout time.Duration, what string, done func() (bool, error), procs ...*Process) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := done()
		if ok {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			last = err
		}
		for _, p := range procs {
			select {
			case <-p.Exited():
				return fmt.Errorf("waiting for %s: a process exited (code %d):\n%s", what, p.ExitCode(), p.LogTail(30))
			default:
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("timed out waiting for %s", what), last)
		case <-tick.C:
		}
	}
}

// ProjectSecret does what a kubelet does for a Secret volume of a pod that
// runs here as a process: it writes each key of Secret namespace/name on c
// into a file of dir, and writes them again whenever the Secret changes
// (polled every interval), each file replaced in one rename. It returns once
// the Secret has been written once; the copying stops with ctx.
func ProjectSecret(ctx context.Context, c client.Client, namespace, name, dir string, interval time.Duration) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var written map[string][]byte
	project := func() (bool, error) {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for key, value := range secret.Data {
			if bytes.Equal(written[key], value) {
				continue
			}
			if err := writeFileAtomically(filepath.Join(dir, key), value); err != nil {
				return false, err
			}
		}
		written = secret.Data
		return true, nil
	}
	if err := waitUntil(ctx, 3*time.Minute, "Secret "+namespace+"/"+name, project); err != nil {
		return err
	}
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _ = project()
			}
		}
	}()
	return nil
}
