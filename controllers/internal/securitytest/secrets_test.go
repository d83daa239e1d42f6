package securitytest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/spoketest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

const (
	cluster = "secure-cluster" // the spoke's cluster namespace on the hub
	roots   = "secure"         // the namespace of the root policies
	data    = "secure-data"    // the namespace of the Secrets on the managed cluster
)

// Secret data the policies of the test enforce, find drifted, delete or fail to
// create: none of it may be logged or reported.
const (
	enforcedValue = "sentinel-enforced-9f3Kq2"  // enforced into Secret creds
	driftedValue  = "sentinel-drifted-Lw81xZ"   // written over it on the managed cluster
	deletedValue  = "sentinel-deleted-pR4t7M"   // in Secret stale, which mustnothave deletes
	rejectedValue = "sentinel-rejected-Vb62nH"  // in a Secret the API server refuses
	wantedValue   = "sentinel-wanted-Qe5sJ0"    // what an inform policy wants in Secret watched
	foundValue    = "sentinel-found-Zc38uT"     // what Secret watched holds
	hubToken      = "sentinel-hub-token-Xy09Fd" // the bearer token of the spoke's hub connection
)

// logBuffer collects the log lines of every controller of the test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logVerboselyInto makes w the log of every controller of the test (and of
// client-go), through the logger the hub and spoke binaries build from their
// flags, as verbose as those flags make it: every V level, and development
// mode, in which controller-runtime's encoder writes whole Kubernetes objects
// rather than their names; JSON lines.
func logVerboselyInto(t *testing.T, w *logBuffer) {
	t.Helper()
	opts := zap.Options{}
	flags := flag.NewFlagSet("controller", flag.ContinueOnError)
	opts.BindFlags(flags)
	if err := flags.Parse([]string{"--zap-devel=true", "--zap-encoder=json", "--zap-log-level=127", "--zap-stacktrace-level=panic"}); err != nil {
		t.Fatal(err)
	}
	logger := zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(w))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
}

// secretForms are the ways a secret value could show up in text: as it is and
// base64-encoded (Secret data, []byte fields marshalled to JSON).
func secretForms(name, value string) map[string]string {
	return map[string]string{
		name:             value,
		name + " base64": base64.StdEncoding.EncodeToString([]byte(value)),
	}
}

// keyForms are the ways a PEM private key could show up: the PEM, its base64
// (a []byte field marshalled to JSON), and any line of its body.
func keyForms(t *testing.T, name string, pemData []byte) map[string]string {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil || !strings.Contains(block.Type, "PRIVATE KEY") {
		t.Fatalf("%s is not a PEM private key", name)
	}
	forms := map[string]string{
		name + " base64": base64.StdEncoding.EncodeToString(pemData),
		name + " DER":    base64.StdEncoding.EncodeToString(block.Bytes)[:48],
	}
	for i, line := range strings.Split(string(pemData), "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			forms[fmt.Sprintf("%s line %d", name, i)] = line
		}
	}
	return forms
}

// leaks names each secret form found in text, with the first line holding it,
// the secret masked and the line cut short.
func leaks(text string, forms map[string]string) []string {
	var found []string
	for name, form := range forms {
		i := strings.Index(text, form)
		if i < 0 {
			continue
		}
		start := strings.LastIndexByte(text[:i], '\n') + 1
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text) - i
		}
		line := strings.ReplaceAll(text[start:i+end], form, "<"+name+">")
		if len(line) > 600 {
			line = line[:600] + "..."
		}
		found = append(found, fmt.Sprintf("%s, in %s", name, line))
	}
	return found
}

// startPlanes starts the hub (with the placement webhook installed) and the
// managed cluster, in parallel.
func startPlanes(t *testing.T) (hubPlane, managed *localplane.Plane) {
	t.Helper()
	root := testkit.RepoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "manifests", "hub", "webhook.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	webhook := admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(raw, &webhook); err != nil {
		t.Fatal(err)
	}
	var hubErr, managedErr error
	var starting sync.WaitGroup
	starting.Go(func() {
		hubPlane, hubErr = localplane.StartWith("hub", localplane.Options{
			MutatingWebhooks: []admissionregistrationv1.MutatingWebhookConfiguration{webhook},
		})
	})
	starting.Go(func() { managed, managedErr = localplane.Start("spoke") })
	starting.Wait()
	for _, p := range []*localplane.Plane{hubPlane, managed} {
		if p != nil {
			t.Cleanup(func() { _ = p.Stop() })
		}
	}
	testkit.FatalOrSkip(t, "starting the API servers", errors.Join(hubErr, managedErr))
	return hubPlane, managed
}

// secretTemplate is an object template about Secret data/name holding key: value.
func secretTemplate(complianceType, name, key, value string) string {
	return fmt.Sprintf(`
        - complianceType: %s
          objectDefinition:
            apiVersion: v1
            kind: Secret
            metadata: {name: %s, namespace: %s}
            data: {%q: %s}`, complianceType, name, data, key, base64.StdEncoding.EncodeToString([]byte(value)))
}

// secretPolicy is a root policy with one ConfigurationPolicy of the given
// object templates.
func secretPolicy(name, action, objectTemplates string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  disabled: false
  remediationAction: %[3]s
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: %[1]s-secrets}
      spec:
        remediationAction: inform
        object-templates:%[4]s
`, name, roots, action, objectTemplates)
}

func writeSecret(t *testing.T, c client.Client, name, key, value string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: data, Name: name}}
	_, err := ctrl.CreateOrUpdate(context.Background(), c, s, func() error {
		s.Data = map[string][]byte{key: []byte(value)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoSecretIsLogged runs the hub (with its placement webhook serving TLS)
// and a spoke, each against its own API server, with their loggers at the most
// verbose level, through policies that enforce a Secret, put it back after it
// drifts, delete one, fail to create one, and find one not as specified; the
// spoke reaches the hub with a bearer token besides its client certificate.
// No Secret data, hub credential or webhook key may appear in a log line, in
// an Event on either API server, or in the status of a policy.
func TestNoSecretIsLogged(t *testing.T) {
	var logs logBuffer
	logVerboselyInto(t, &logs)
	ctx := context.Background()
	hubPlane, managed := startPlanes(t)
	if err := localplane.EnsureCluster(ctx, hubPlane.Client, cluster); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{roots, placement.Namespace} {
		if err := localplane.EnsureNamespace(ctx, hubPlane.Client, ns); err != nil {
			t.Fatal(err)
		}
	}
	if err := localplane.EnsureNamespace(ctx, managed.Client, data); err != nil {
		t.Fatal(err)
	}
	writeSecret(t, managed.Client, "stale", "token", deletedValue)
	writeSecret(t, managed.Client, "watched", "token", foundValue)

	hubtest.Start(t, hubPlane.Config, func(o *hub.ManagerOptions) {
		o.Placement = true
		o.WebhookHost, o.WebhookPort, o.WebhookCertDir = hubPlane.WebhookHost, hubPlane.WebhookPort, hubPlane.WebhookCertDir
	})
	testkit.Eventually(t, 30*time.Second, "the webhook server to answer", func() string {
		conn, err := tls.Dial("tcp", fmt.Sprintf("%s:%d", hubPlane.WebhookHost, hubPlane.WebhookPort), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err.Error()
		}
		conn.Close()
		return ""
	})
	hubCfg := rest.CopyConfig(hubPlane.Config)
	hubCfg.BearerToken = hubToken // sent with every request; the client certificate authenticates
	spoketest.Start(t, hubCfg, managed.Config, cluster)

	testkit.Apply(t, hubPlane.Client, secretPolicy("enforced", "enforce",
		secretTemplate("musthave", "creds", "password", enforcedValue)+
			secretTemplate("mustnothave", "stale", "token", deletedValue))+"---"+
		secretPolicy("rejected", "enforce", secretTemplate("musthave", "rejected", "not a key!", rejectedValue))+"---"+
		secretPolicy("watched", "inform", secretTemplate("musthave", "watched", "token", wantedValue))+"---"+
		testkit.PlacementRuleBinding(roots, "to-cluster", []string{cluster}, "enforced", "rejected", "watched"))

	// reported waits until the hub replica of a root policy has the compliance
	// and a history message containing each of messages.
	reported := func(name string, state policyv1.ComplianceState, messages ...string) {
		t.Helper()
		testkit.Eventually(t, 45*time.Second, "policy "+name+" reported to the hub", func() string {
			r := &policyv1.Policy{}
			if err := hubPlane.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: replication.Name(roots, name)}, r); err != nil {
				return err.Error()
			}
			if r.Status.ComplianceState != state {
				return fmt.Sprintf("%s, want %s: %+v", r.Status.ComplianceState, state, r.Status.Details)
			}
			all := ""
			for _, d := range r.Status.Details {
				for _, h := range d.History {
					all += h.Message + "\n"
				}
			}
			for _, m := range messages {
				if !strings.Contains(all, m) {
					return fmt.Sprintf("no history message contains %q: %s", m, all)
				}
			}
			return ""
		})
	}
	reported("enforced", policyv1.Compliant, "secrets [creds] was created successfully", "secrets [stale] was deleted successfully")
	reported("rejected", policyv1.NonCompliant, "secrets [rejected] cannot be created")
	reported("watched", policyv1.NonCompliant, "secrets [watched] found but not as specified")

	writeSecret(t, managed.Client, "creds", "password", driftedValue)
	reported("enforced", policyv1.Compliant, "secrets [creds] was updated successfully")
	testkit.Eventually(t, 30*time.Second, "enforce puts Secret creds back", func() string {
		s := &corev1.Secret{}
		if err := managed.Client.Get(ctx, client.ObjectKey{Namespace: data, Name: "creds"}, s); err != nil {
			return err.Error()
		}
		if string(s.Data["password"]) != enforcedValue {
			return "Secret creds holds " + string(s.Data["password"])
		}
		return ""
	})
	time.Sleep(time.Second) // a few more evaluations and status copies

	forms := map[string]string{}
	for name, value := range map[string]string{
		"enforced Secret data": enforcedValue, "drifted Secret data": driftedValue, "deleted Secret data": deletedValue,
		"rejected Secret data": rejectedValue, "wanted Secret data": wantedValue, "found Secret data": foundValue,
		"hub bearer token": hubToken,
	} {
		for n, f := range secretForms(name, value) {
			forms[n] = f
		}
	}
	webhookKey, err := os.ReadFile(filepath.Join(hubPlane.WebhookCertDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	for n, f := range keyForms(t, "webhook TLS key", webhookKey) {
		forms[n] = f
	}
	for n, f := range keyForms(t, "hub client key", hubCfg.KeyData) {
		forms[n] = f
	}

	logged := logs.String()
	// The logs are really captured, from both controllers, at debug verbosity.
	for _, want := range []string{`"controller":"propagator"`, `"controller":"spoke-configurationpolicy"`, `"level":"debug"`} {
		if !strings.Contains(logged, want) {
			t.Fatalf("the log holds no %s: are the controllers' logs captured?", want)
		}
	}
	if found := leaks(logged, forms); len(found) > 0 {
		t.Errorf("logged:\n%s", strings.Join(found, "\n"))
	}
	for _, p := range []*localplane.Plane{hubPlane, managed} {
		events := &corev1.EventList{}
		if err := p.Client.List(ctx, events); err != nil {
			t.Fatal(err)
		}
		if len(events.Items) == 0 {
			t.Fatalf("no Events on the %s: the scenario did not run", p.Name)
		}
		if found := leaks(marshal(t, events), forms); len(found) > 0 {
			t.Errorf("in Events on the %s: %v", p.Name, found)
		}
		policies := &policyv1.PolicyList{}
		if err := p.Client.List(ctx, policies); err != nil {
			t.Fatal(err)
		}
		for _, pol := range policies.Items {
			if found := leaks(marshal(t, pol.Status), forms); len(found) > 0 {
				t.Errorf("in the status of policy %s/%s on the %s: %v", pol.Namespace, pol.Name, p.Name, found)
			}
		}
	}
	configPolicies := &policyv1.ConfigurationPolicyList{}
	if err := managed.Client.List(ctx, configPolicies); err != nil {
		t.Fatal(err)
	}
	for _, cp := range configPolicies.Items {
		if found := leaks(marshal(t, cp.Status), forms); len(found) > 0 {
			t.Errorf("in the status of ConfigurationPolicy %s/%s: %v", cp.Namespace, cp.Name, found)
		}
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
