// Command fleetpolicy-spoke is the controller of a managed cluster: it mirrors
// the replicated policies of its cluster namespace on the hub, creates their
// templates on the managed cluster in dependency order, evaluates and enforces
// ConfigurationPolicies, and reports compliance to the managed cluster and the
// hub.
//
//	fleetpolicy-spoke --hub-kubeconfig=/var/run/hub/kubeconfig --cluster-name=cluster1
//
// --kubeconfig (or $KUBECONFIG, or the in-cluster config) reaches the managed
// cluster. On the hub the spoke needs only the RBAC of manifests/spoke/hub.
// When the hub kubeconfig holds a ServiceAccount's token, the spoke renews it
// by TokenRequest before it expires (--hub-token-lifetime; package hubtoken),
// so a short bootstrap token (`kubectl create token`) is all it needs.
//
//	fleetpolicy-spoke ... --configurationpolicy-evaluator=ocm --operatorpolicy-evaluator=ocm
//
// leaves the evaluation and enforcement of ConfigurationPolicies (and,
// separately, OperatorPolicies) to OCM's config-policy-controller running on
// the managed cluster, while the spoke still syncs the templates in dependency
// order, copies the encryption key and reports the status and compliance
// Events OCM's controller writes (docs/ocm-compatibility.md).
//
//	fleetpolicy-spoke --uninstall
//
// is the uninstall path: run it once the spoke Deployment is gone (it reaches
// only the managed cluster). It removes the finalizer
// operatorpolicy.fleetpolicy.io/removal from every OperatorPolicy and deletes
// nothing, so that the OperatorPolicies, their namespaces and CRD can then be
// deleted without waiting for the controller and without uninstalling any
// operator (docs/ocm-fields.md, "Deleting an OperatorPolicy").
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/commandline"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hubtoken"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
)

func main() {
	o := spoke.DefaultManagerOptions()
	var qps, hubQPS float64
	hubKubeconfig := flag.String("hub-kubeconfig", "", "kubeconfig of the hub (required)")
	hubTokenLifetime := flag.Duration("hub-token-lifetime", time.Hour, "lifetime of each hub token the spoke requests for its ServiceAccount, renewed at four fifths of it (0: use the kubeconfig's token as it is)")
	flag.StringVar(&o.ClusterName, "cluster-name", "", "the managed cluster's name, which is its namespace on the hub (required)")
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "address the Prometheus metrics endpoint binds to (0 disables it)")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, "address the /healthz and /readyz probes bind to")
	flag.BoolVar(&o.LeaderElect, "leader-elect", false, "elect a leader on the managed cluster so that only one of several spoke processes acts")
	flag.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election lease (default: the in-cluster namespace)")
	flag.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "policies (and ConfigurationPolicies) reconciled at once")
	flag.DurationVar(&o.HubStatusDelay, "hub-status-delay", o.HubStatusDelay, "how long a policy's status changes are gathered before its hub replica's status is written")
	flag.StringVar(&o.OperatorPolicyDefaultNamespace, "operator-policy-default-namespace", "", "The default namespace to be used by an OperatorPolicy if not specified in the policy (as OCM's flag): where its operator is installed when spec.subscription.namespace is unset and the PackageManifest suggests none")
	flag.Float64Var(&qps, "kube-api-qps", float64(o.QPS), "client-side sustained requests per second to the managed cluster's API server (negative: no client-side limit)")
	flag.IntVar(&o.Burst, "kube-api-burst", o.Burst, "client-side request burst to the managed cluster's API server")
	flag.Float64Var(&hubQPS, "hub-kube-api-qps", float64(o.HubQPS), "client-side sustained requests per second to the hub's API server, which serves every spoke of the fleet (negative: no client-side limit)")
	flag.IntVar(&o.HubBurst, "hub-kube-api-burst", o.HubBurst, "client-side request burst to the hub's API server")
	flag.DurationVar(&o.TemplateLimits.Timeout, "template-timeout", o.TemplateLimits.Timeout, "time bound of resolving the managed-cluster templates of one policy evaluation; past it the evaluation reports a template error and is tried again after a backoff")
	templateMemory := flag.String("template-memory", resource.NewQuantity(o.TemplateLimits.Memory, resource.BinarySI).String(), "memory bound of resolving one object definition's managed-cluster templates (what its functions make and print), as a quantity such as 4Mi")
	flag.Var(&o.ConfigurationPolicyEvaluator, "configurationpolicy-evaluator", "who evaluates and enforces ConfigurationPolicies: fleetpolicy (this controller) or ocm (OCM's config-policy-controller, run next to it); template sync, ordering and status stay here")
	flag.Var(&o.OperatorPolicyEvaluator, "operatorpolicy-evaluator", "who evaluates and enforces OperatorPolicies: fleetpolicy (this controller) or ocm (OCM's config-policy-controller with --enable-operator-policy; needs --configurationpolicy-evaluator=ocm); template sync, ordering and status stay here")
	cpuProfile := flag.String("cpu-profile", "", "write a CPU profile of the whole run to this file (for benchmarks)")
	uninstall := flag.Bool("uninstall", false, "release the finalizers of every OperatorPolicy without deleting anything, then exit (run once the spoke controller is stopped)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	o.QPS, o.HubQPS = float32(qps), float32(hubQPS)
	if q, err := resource.ParseQuantity(*templateMemory); err != nil || q.Value() <= 0 || o.TemplateLimits.Timeout <= 0 {
		fmt.Fprintln(os.Stderr, "--template-timeout must be positive and --template-memory a positive quantity such as 4Mi")
		os.Exit(2)
	} else {
		o.TemplateLimits.Memory = q.Value()
	}
	ctrl.SetLogger(logging.Bounded(zap.New(zap.UseFlagOptions(&zapOpts))))
	logging.WithoutTemplateText(os.Stderr)
	logger := ctrl.Log.WithName("fleetpolicy-spoke")

	if *uninstall {
		os.Exit(releaseFinalizers(logger))
	}
	if *hubKubeconfig == "" || o.ClusterName == "" {
		fmt.Fprintln(os.Stderr, "fleetpolicy-spoke: --hub-kubeconfig and --cluster-name are required")
		flag.Usage()
		os.Exit(2)
	}
	hubCfg, err := clientcmd.BuildConfigFromFlags("", *hubKubeconfig)
	if err != nil {
		logger.Error(err, "hub kubeconfig", "path", *hubKubeconfig)
		os.Exit(1)
	}
	managedCfg, err := ctrl.GetConfig() // --kubeconfig, $KUBECONFIG or in-cluster
	if err != nil {
		logger.Error(err, "no kubeconfig for the managed cluster")
		os.Exit(1)
	}
	stopCPUProfile, err := commandline.StartCPUProfile(*cpuProfile)
	if err != nil {
		logger.Error(err, "cpu profile")
		os.Exit(1)
	}
	defer stopCPUProfile()
	ctx := ctrl.SetupSignalHandler()
	if *hubTokenLifetime > 0 {
		renewing, ok, err := hubtoken.Renewing(ctx, hubCfg, *hubTokenLifetime, logger)
		if err != nil {
			logger.Error(err, "hub token renewal")
			os.Exit(1)
		}
		if ok {
			logger.Info("renewing the hub token", "lifetime", *hubTokenLifetime)
		}
		hubCfg = renewing
	}
	mgr, err := spoke.NewManager(ctx, hubCfg, managedCfg, o)
	if err == nil {
		err = mgr.Start(ctx)
	}
	if err != nil {
		logger.Error(err, "spoke controller stopped")
		stopCPUProfile()
		os.Exit(1)
	}
}

// releaseFinalizers is --uninstall: it releases every OperatorPolicy's
// finalizer and returns the exit code.
func releaseFinalizers(logger logr.Logger) int {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		logger.Error(err, "no kubeconfig for the managed cluster")
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		logger.Error(err, "managed cluster client")
		return 1
	}
	released, err := operatorpolicy.ReleaseFinalizers(ctrl.SetupSignalHandler(), c)
	for _, key := range released {
		fmt.Printf("released OperatorPolicy %s\n", key)
	}
	if err != nil {
		logger.Error(err, "some OperatorPolicies still hold their finalizer; run --uninstall again")
		return 1
	}
	fmt.Printf("%d OperatorPolicies released; no operator was removed\n", len(released))
	return 0
}
