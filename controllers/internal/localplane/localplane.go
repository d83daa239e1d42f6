package localplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

// CRDDirs are the CRD folders, relative to the repository root, installed into
// every plane.
var CRDDirs = []string{"manifests/crds/fleetpolicy", "manifests/crds/ocm", "manifests/crds/olm"}

// Options tune a plane.
type Options struct {
	// MutatingWebhooks are installed pointing at a local webhook server: envtest
	// rewrites each webhook's service to a URL on WebhookHost:WebhookPort (keeping
	// the service's path) and writes a serving certificate into WebhookCertDir.
	MutatingWebhooks []admissionregistrationv1.MutatingWebhookConfiguration
	// CRDPaths, relative to the repository root (folders or files), replace
	// CRDDirs: a managed cluster of an OCM fleet starts with only what OCM's
	// agents need (ManagedClusterCRDPaths), and the add-on brings the rest.
	CRDPaths []string
	// APIServerFlags are set on the kube-apiserver (name without dashes:
	// value), such as goaway-chance.
	APIServerFlags map[string]string
}

// Plane is one running API server with fleetpolicy's CRDs installed.
type Plane struct {
	// Name says which role the plane plays ("hub", "spoke").
	Name string
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a controller-runtime client over Config with the fleetpolicy scheme.
	Client client.Client
	// KubeconfigPath is a kubeconfig file for Config (for kubectl and the binaries).
	KubeconfigPath string
	// WebhookHost, WebhookPort and WebhookCertDir are where the API server
	// expects the webhook server of Options.MutatingWebhooks, and its certificate.
	WebhookHost    string
	WebhookPort    int
	WebhookCertDir string

	env *envtest.Environment
	dir string
	// attached is a plane Attach made: an API server started elsewhere, whose
	// own kube-controller-manager signs CSRs with a CA its API server trusts
	// and runs the garbage collector and namespace controller.
	attached bool
	// clientCAFile is the API server's --client-ca-file (envtest's).
	clientCAFile string
}

// RepoRoot finds the repository root: the nearest directory above the working
// directory that holds go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("localplane: no go.work above the working directory; run from inside the fleetpolicy repository")
		}
		dir = parent
	}
}

// AssetsDir is where the kube-apiserver and etcd binaries are: $KUBEBUILDER_ASSETS
// when set, otherwise bin/envtest in the repository.
func AssetsDir(root string) (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(root, "bin", "envtest")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("localplane: %s not found in %s: run `make tools` first", b, dir)
		}
	}
	return dir, nil
}

// Start starts one API server named name and installs every CRD.
func Start(name string) (*Plane, error) { return StartWith(name, Options{}) }

// StartWith is Start with options.
func StartWith(name string, opts Options) (*Plane, error) {
	if shortTest() {
		return nil, ErrShortTest
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := AssetsDir(root)
	if err != nil {
		return nil, err
	}
	paths := CRDDirs
	if opts.CRDPaths != nil {
		paths = opts.CRDPaths
	}
	dirs := make([]string, len(paths))
	for i, d := range paths {
		dirs[i] = filepath.Join(root, d)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDDirectoryPaths:        dirs,
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme.New(),
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{MutatingWebhooks: mutatingPointers(opts.MutatingWebhooks)},
	}
	// etcd's default quota, 2 GiB, is reached before 300,000 replicas and
	// their history (the benchmark's largest scenario); the quota is a ceiling,
	// not an allocation.
	etcd := &envtest.Etcd{}
	etcd.Configure().Set("quota-backend-bytes", strconv.FormatInt(etcdQuota, 10))
	env.ControlPlane.Etcd = etcd
	if len(opts.APIServerFlags) > 0 {
		api := &envtest.APIServer{}
		for name, value := range opts.APIServerFlags {
			api.Configure().Set(name, value)
		}
		env.ControlPlane.APIServer = api
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("localplane: starting %s API server: %w", name, err)
	}
	p := &Plane{Name: name, Config: cfg, env: env, clientCAFile: filepath.Join(env.ControlPlane.APIServer.CertDir, "client-cert-auth-ca.crt")}
	if len(opts.MutatingWebhooks) > 0 {
		w := env.WebhookInstallOptions
		p.WebhookHost, p.WebhookPort, p.WebhookCertDir = w.LocalServingHost, w.LocalServingPort, w.LocalServingCertDir
	}
	if err := p.finish(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return p, nil
}

// Attach is a plane for an API server that runs already (a real cluster,
// such as the node of `make e2e`), reached as a cluster admin with the
// kubeconfig at kubeconfigPath. That cluster's own kube-controller-manager
// must sign kubernetes.io/kube-apiserver-client CSRs with a CA its API server
// trusts (--cluster-signing-cert-file and --client-ca-file) and run the
// garbage collector and namespace controller: StartOCMHub and Join use it
// instead of starting one. Stop removes only the plane's files; the API
// server keeps running.
func Attach(name, kubeconfigPath string) (*Plane, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("localplane: kubeconfig of %s: %w", name, err)
	}
	if len(cfg.CAData) == 0 && cfg.CAFile != "" {
		// TokenKubeconfig embeds the CA: the agents may run elsewhere.
		if cfg.CAData, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("localplane: CA of %s: %w", name, err)
		}
		cfg.CAFile = ""
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, fmt.Errorf("localplane: client for %s: %w", name, err)
	}
	dir, err := os.MkdirTemp("", "fleetpolicy-"+name+"-")
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(kubeconfigPath)
	if err != nil {
		return nil, err
	}
	return &Plane{Name: name, Config: cfg, Client: c, KubeconfigPath: abs, dir: dir, attached: true}, nil
}

// etcdQuota is the planes' etcd --quota-backend-bytes: 8 GiB, etcd's
// suggested maximum.
const etcdQuota = 8 << 30

func mutatingPointers(in []admissionregistrationv1.MutatingWebhookConfiguration) []*admissionregistrationv1.MutatingWebhookConfiguration {
	out := make([]*admissionregistrationv1.MutatingWebhookConfiguration, len(in))
	for i := range in {
		out[i] = in[i].DeepCopy()
	}
	return out
}

func (p *Plane) finish() error {
	c, err := client.New(p.Config, client.Options{Scheme: p.env.Scheme})
	if err != nil {
		return fmt.Errorf("localplane: client for %s: %w", p.Name, err)
	}
	p.Client = c
	dir, err := os.MkdirTemp("", "fleetpolicy-"+p.Name+"-")
	if err != nil {
		return err
	}
	p.dir = dir
	user, err := p.env.AddUser(envtest.User{Name: "fleetpolicy-admin", Groups: []string{"system:masters"}}, p.Config)
	if err != nil {
		return fmt.Errorf("localplane: admin user for %s: %w", p.Name, err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("localplane: kubeconfig for %s: %w", p.Name, err)
	}
	p.KubeconfigPath = filepath.Join(dir, "kubeconfig")
	return os.WriteFile(p.KubeconfigPath, kubeconfig, 0o600)
}

// Host is the API server's URL.
func (p *Plane) Host() string { return p.Config.Host }

// Stop stops the API server and etcd and removes the plane's files (of an
// attached plane, only its files).
func (p *Plane) Stop() error {
	var err error
	if p.env != nil {
		err = p.env.Stop()
	}
	if p.dir != "" {
		err = errors.Join(err, os.RemoveAll(p.dir))
	}
	return err
}

// Fleet is a hub and its spokes, each its own API server.
type Fleet struct {
	Hub    *Plane
	Spokes []*Plane
}

// StartFleet starts a hub and n spokes (named spoke1..spokeN) in parallel.
func StartFleet(ctx context.Context, n int) (*Fleet, error) {
	if shortTest() { // before the goroutines: it may parse the command line
		return nil, ErrShortTest
	}
	names := []string{"hub"}
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("spoke%d", i))
	}
	planes := make([]*Plane, len(names))
	errs := make([]error, len(names))
	done := make(chan int, len(names))
	for i, name := range names {
		go func() {
			planes[i], errs[i] = Start(name)
			done <- i
		}()
	}
	for range names {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &Fleet{Hub: planes[0], Spokes: planes[1:]}
	if err := errors.Join(errs...); err != nil {
		_ = f.Stop()
		return nil, err
	}
	return f, nil
}

// Stop stops every plane of the fleet that started.
func (f *Fleet) Stop() error {
	var errs []error
	for _, p := range append([]*Plane{f.Hub}, f.Spokes...) {
		if p != nil {
			errs = append(errs, p.Stop())
		}
	}
	return errors.Join(errs...)
}
