package conformancetest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// hopTimeout bounds each hop of the corpus's way to the managed clusters.
const hopTimeout = 90 * time.Second

// The managed clusters of conformance/hub/inventory.yaml.
const prod, dev = "conf-prod", "conf-dev"

var (
	configurationPolicy = schema.GroupVersionKind{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "ConfigurationPolicy"}
	operatorPolicy      = schema.GroupVersionKind{Group: "policy.open-cluster-management.io", Version: "v1beta1", Kind: "OperatorPolicy"}
)

// templateWant is a template the spoke must create on a managed cluster (or,
// with absent, must not: its dependencies are not met).
type templateWant struct {
	cluster string
	gvk     schema.GroupVersionKind
	name    string
	// action is the remediationAction the template must carry there.
	action string
	absent bool
}

var (
	templatesWanted = func() []templateWant {
		var out []templateWant
		for _, c := range []string{prod, dev} {
			for _, n := range []string{"baseline-namespace", "baseline-limitrange", "baseline-no-privileged-pods", "baseline-settings"} {
				out = append(out, templateWant{cluster: c, gvk: configurationPolicy, name: n, action: "enforce"})
			}
			out = append(out,
				templateWant{cluster: c, gvk: configurationPolicy, name: "raw-quota", action: "inform"},
				templateWant{cluster: c, gvk: configurationPolicy, name: "hardening-audit-log", action: "inform"},
				templateWant{cluster: c, gvk: configurationPolicy, name: "hardening-etcd", action: "inform"},
				// The set it depends on is NonCompliant: Pending, not created.
				templateWant{cluster: c, gvk: configurationPolicy, name: "hardening-report", absent: true})
		}
		return append(out,
			templateWant{cluster: prod, gvk: configurationPolicy, name: "compliance-operator-ns", action: "inform"},
			templateWant{cluster: prod, gvk: operatorPolicy, name: "compliance-operator", action: "inform"},
			templateWant{cluster: prod, gvk: configurationPolicy, name: "backup-namespace", action: "enforce"},
			templateWant{cluster: prod, gvk: configurationPolicy, name: "backup-schedule", action: "enforce"},
			// InformOnly under an enforcing parent stays inform.
			templateWant{cluster: prod, gvk: configurationPolicy, name: "backup-audit", action: "inform"},
			templateWant{cluster: prod, gvk: configurationPolicy, name: "crypto-version", action: "inform"},
			templateWant{cluster: dev, gvk: configurationPolicy, name: "crypto-version", action: "enforce"},
		)
	}()
)

// TestCorpusOnFleetpolicy applies the conformance corpus to a fleetpolicy hub
// with strict field validation (nothing refused), lets OCM's placement
// controller and fleetpolicy's PlacementRule scheduler decide on its clusters,
// and follows every Policy to two managed clusters running fleetpolicy's
// spoke: replicas with the right remediationAction, every template created
// (or held back by its dependencies) with the remediationAction OCM's add-on
// would write, and every created template evaluated without a template error.
func TestCorpusOnFleetpolicy(t *testing.T) {
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	// go-template-utils' dependency watcher logs with klog.
	klog.SetLogger(logr.Discard())
	fleet := testkit.StartFleet(t, 2)
	hubC := fleet.Hub.Client
	root := testkit.RepoRoot(t)
	for _, c := range []string{prod, dev} {
		if err := localplane.EnsureClusterNamespace(ctx, hubC, c); err != nil {
			t.Fatal(err)
		}
	}
	applyDir(t, hubC, filepath.Join(root, "conformance", "hub"))
	placement, err := localplane.StartOCMPlacement(ctx, fleet.Hub)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(placement.Stop)
	hubtest.Start(t, fleet.Hub.Config, func(o *hub.ManagerOptions) { o.Placement = false })
	spokes := map[string]client.Client{prod: fleet.Spokes[0].Client, dev: fleet.Spokes[1].Client}
	spoketest.Start(t, fleet.Hub.Config, fleet.Spokes[0].Config, prod)
	spoketest.Start(t, fleet.Hub.Config, fleet.Spokes[1].Config, dev)

	// Strict: an unknown or duplicate field is an error, not a warning.
	applyDir(t, client.WithFieldValidation(hubC, metav1.FieldValidationStrict), filepath.Join(root, "conformance", "corpus"))

	replicasWanted := expectedReplicas(t, root)
	for rootName, want := range replicasWanted {
		ns, name, _ := strings.Cut(rootName, "/")
		testkit.Eventually(t, hopTimeout, "replication of "+rootName, func() string {
			got := map[string]string{}
			for _, c := range []string{prod, dev} {
				replica := &policyv1.Policy{}
				err := hubC.Get(ctx, client.ObjectKey{Namespace: c, Name: replication.Name(ns, name)}, replica)
				if err == nil {
					got[c] = strings.ToLower(string(replica.Spec.RemediationAction))
				} else if client.IgnoreNotFound(err) != nil {
					return err.Error()
				}
			}
			if !maps.Equal(got, want) {
				return fmt.Sprintf("replicas %v, want %v", got, want)
			}
			return ""
		})
	}

	for _, w := range templatesWanted {
		what := fmt.Sprintf("template sync of %s %s on %s", w.gvk.Kind, w.name, w.cluster)
		if w.absent {
			continue
		}
		testkit.Eventually(t, hopTimeout, what, func() string {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(w.gvk)
			if err := spokes[w.cluster].Get(ctx, client.ObjectKey{Namespace: w.cluster, Name: w.name}, obj); err != nil {
				return err.Error()
			}
			if action, _, _ := unstructured.NestedString(obj.Object, "spec", "remediationAction"); !strings.EqualFold(action, w.action) {
				return fmt.Sprintf("remediationAction %q, want %q", action, w.action)
			}
			// Evaluated: the spoke understood every field it was given.
			if compliant, _, _ := unstructured.NestedString(obj.Object, "status", "compliant"); compliant == "" {
				return "not evaluated yet (no status.compliant)"
			}
			return ""
		})
	}
	for _, w := range templatesWanted {
		if !w.absent {
			continue
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(w.gvk)
		err := spokes[w.cluster].Get(ctx, client.ObjectKey{Namespace: w.cluster, Name: w.name}, obj)
		if client.IgnoreNotFound(err) != nil || err == nil {
			t.Errorf("dependency gating of %s %s on %s: want no template while its dependencies are unmet, got %v", w.gvk.Kind, w.name, w.cluster, err)
		}
	}

	t.Run("no template error reaches the hub", func(t *testing.T) {
		for rootName, want := range replicasWanted {
			ns, name, _ := strings.Cut(rootName, "/")
			for c := range want {
				replica := &policyv1.Policy{}
				if err := hubC.Get(ctx, client.ObjectKey{Namespace: c, Name: replication.Name(ns, name)}, replica); err != nil {
					t.Fatal(err)
				}
				for _, d := range replica.Status.Details {
					for _, h := range d.History {
						if strings.Contains(h.Message, "template-error") {
							t.Errorf("status sync of %s on %s: %s", rootName, c, h.Message)
						}
					}
				}
			}
		}
	})
	t.Run("gated template is Pending on the root", func(t *testing.T) {
		testkit.Eventually(t, hopTimeout, "root status of conformance-sets/hardening-report", func() string {
			p := &policyv1.Policy{}
			if err := hubC.Get(ctx, client.ObjectKey{Namespace: "conformance-sets", Name: "hardening-report"}, p); err != nil {
				return err.Error()
			}
			var states []string
			for _, s := range p.Status.Status {
				states = append(states, s.ClusterName+"="+string(s.ComplianceState))
			}
			slices.Sort(states)
			if want := []string{dev + "=Pending", prod + "=Pending"}; !slices.Equal(states, want) {
				return fmt.Sprintf("clusters %v, want %v", states, want)
			}
			return ""
		})
	})
}

// expectedReplicas reads conformance/expected-replicas.yaml: root
// (namespace/name) -> cluster -> remediationAction.
func expectedReplicas(t *testing.T, root string) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "conformance", "expected-replicas.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	if err := yaml.UnmarshalStrict(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// applyDir applies every manifest file of dir with c.
func applyDir(t *testing.T, c client.Client, dir string) {
	t.Helper()
	files, err := localplane.ManifestFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		objs, err := localplane.ReadManifestFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := localplane.Apply(context.Background(), c, objs); err != nil {
			t.Fatalf("applying %s: %v", filepath.Base(f), err)
		}
	}
}
