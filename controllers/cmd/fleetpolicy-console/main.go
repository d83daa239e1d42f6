// Command fleetpolicy-console is the read-only web console of a fleetpolicy
// hub: the fleet, each policy, its rollout and placement, each cluster, live
// and exportable (controllers/internal/console; README "Console").
//
// It is a binary of its own, not a page of the hub, because every read must
// be made with the viewer's identity: the hub's service account may read
// every namespace, and a console inside the hub would either read with it
// (showing a viewer what RBAC does not grant) or need a second, per-viewer
// client set beside the controllers'. On its own it holds no credentials
// wider than the viewer's, scales and restarts apart from the controllers,
// and a failure of one never stops the other.
//
// --identity kubeconfig (the default) reads with the kubeconfig's identity:
// one person's console on a workstation,
//
//	bin/fleetpolicy-console --kubeconfig <hub> --bind-address 127.0.0.1:8090
//
// and it refuses to listen beyond loopback then, since anyone who reached it
// would read with that identity. --identity token reads with each viewer's
// bearer token (an Authorization header from an authenticating proxy, or a
// token given on /login) and uses only the kubeconfig's server address and
// CA. Beyond loopback it needs --tls-cert-file and --tls-key-file (it serves
// HTTPS with them, and the login cookie is Secure), since the tokens would
// otherwise cross the network in clear:
//
//	bin/fleetpolicy-console --kubeconfig <hub> --identity token --bind-address 0.0.0.0:8443 \
//	  --tls-cert-file tls.crt --tls-key-file tls.key
//
// Bad flags exit with code 2, naming the flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/commandline"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

func checkFlags(o console.Options, bind, certFile, keyFile string) error {
	var bad []error
	if _, _, err := net.SplitHostPort(bind); err != nil {
		bad = append(bad, fmt.Errorf("--bind-address %q: %w", bind, err))
	}
	if o.Identity == console.IdentityKubeconfig && !commandline.Loopback(bind) {
		bad = append(bad, fmt.Errorf("--bind-address %q is not loopback: with --identity kubeconfig anyone reaching it would read with the kubeconfig's identity; use --identity token", bind))
	}
	if o.Identity == console.IdentityToken && !commandline.Loopback(bind) && certFile == "" {
		bad = append(bad, fmt.Errorf("--bind-address %q is not loopback: with --identity token and no TLS every viewer's token would cross the network in clear; give --tls-cert-file and --tls-key-file, or listen on loopback behind a proxy that terminates TLS", bind))
	}
	if o.Identity != console.IdentityKubeconfig && o.Identity != console.IdentityToken {
		bad = append(bad, fmt.Errorf("--identity must be %s or %s, not %q", console.IdentityKubeconfig, console.IdentityToken, o.Identity))
	}
	if (certFile == "") != (keyFile == "") {
		bad = append(bad, errors.New("--tls-cert-file and --tls-key-file go together"))
	}
	if o.PageSize < 1 || o.MaxPageSize < o.PageSize {
		bad = append(bad, fmt.Errorf("--page-size must be between 1 and --max-page-size (%d), not %d", o.MaxPageSize, o.PageSize))
	}
	if o.MaxViewers < 1 || o.MaxInFlight < 1 || o.MaxReads < 1 {
		bad = append(bad, errors.New("--max-viewers, --max-in-flight and --max-reads must be at least 1"))
	}
	if o.Refresh < 0 || o.RequestTimeout <= 0 {
		bad = append(bad, errors.New("--refresh must not be negative and --request-timeout must be positive"))
	}
	return errors.Join(bad...)
}

func main() {
	o := console.DefaultOptions()
	var kubeconfig, bind, certFile, keyFile string
	fs := flag.NewFlagSet("fleetpolicy-console", flag.ContinueOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the hub (default: $KUBECONFIG, then in-cluster)")
	fs.StringVar(&bind, "bind-address", "127.0.0.1:8090", "where the console listens (loopback unless told otherwise)")
	fs.StringVar(&o.Identity, "identity", o.Identity, "whose identity reads: kubeconfig (the kubeconfig's; loopback only) or token (each viewer's bearer token)")
	fs.StringVar(&certFile, "tls-cert-file", "", "serve HTTPS with this certificate (and mark the login cookie Secure)")
	fs.StringVar(&keyFile, "tls-key-file", "", "the key of --tls-cert-file")
	fs.IntVar(&o.PageSize, "page-size", o.PageSize, "rows per table page")
	fs.IntVar(&o.MaxPageSize, "max-page-size", o.MaxPageSize, "most rows per page a request may ask for (?size=)")
	fs.IntVar(&o.MaxViewers, "max-viewers", o.MaxViewers, "identities whose caches are kept (least recently used dropped)")
	fs.DurationVar(&o.ViewerIdle, "viewer-idle", o.ViewerIdle, "a viewer's caches unused this long are dropped")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", o.MaxInFlight, "requests served at once (429 beyond)")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "time one request may take")
	fs.Int64Var(&o.MaxReads, "max-reads", o.MaxReads, "objects one direct list reads (events, replicas of a cluster, decisions)")
	fs.DurationVar(&o.Refresh, "refresh", o.Refresh, "how often pages update themselves (0: never)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := checkFlags(o, bind, certFile, keyFile); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("console")
	cfg, err := config(kubeconfig)
	if err != nil {
		log.Error(err, "reading the hub's kubeconfig")
		os.Exit(1)
	}
	o.Config, o.Scheme = cfg, scheme.New()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = serve(ctx, o, bind, certFile, keyFile, func(url string) {
		fmt.Printf("fleetpolicy console: %s (identity: %s)\n", url, o.Identity)
	})
	if err != nil {
		log.Error(err, "serving")
		os.Exit(1)
	}
}

// serve serves the console on bind until ctx ends: HTTPS with certFile and
// keyFile when given (the login cookie then Secure), plain HTTP otherwise.
// listening gets the console's URL once it listens.
func serve(ctx context.Context, o console.Options, bind, certFile, keyFile string, listening func(url string)) error {
	o.SecureCookie = certFile != ""
	srv, err := console.New(o)
	if err != nil {
		return fmt.Errorf("building the console: %w", err)
	}
	go srv.Run(ctx)
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return err
	}
	scheme := "http"
	if certFile != "" {
		scheme = "https"
	}
	listening(fmt.Sprintf("%s://%s/", scheme, ln.Addr()))
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: o.RequestTimeout + 10*time.Second, MaxHeaderBytes: 64 << 10}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	}()
	if certFile != "" {
		err = hs.ServeTLS(ln, certFile, keyFile)
	} else {
		err = hs.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func config(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}
