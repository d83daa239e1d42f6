package placementtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
)

// serviceAccountToken returns a token of ServiceAccount tokens/name, bound to
// manifests/hub's ClusterRole role unless role is "".
func serviceAccountToken(t *testing.T, name, role string) string {
	t.Helper()
	token, err := localplane.ServiceAccountToken(context.Background(), c, "tokens", name)
	if role != "" {
		token, err = localplane.HubRoleToken(context.Background(), c, "tokens", name, role)
	}
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func webhookAddr() string { return net.JoinHostPort(plane.WebhookHost, fmt.Sprint(plane.WebhookPort)) }

// freeAddr returns an address on the webhook's host nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(plane.WebhookHost, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// request sends method to https://addr/path with the bearer token ("" sends
// none). The server's certificate is checked against the webhook's CA unless
// insecure (the metrics server's own self-signed certificate).
func request(method, addr, path, token, body string, insecure bool) (*http.Response, error) {
	tlsConfig := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // a self-signed certificate in a test
	if !insecure {
		ca, err := os.ReadFile(filepath.Join(plane.WebhookCertDir, "tls.crt"))
		if err != nil {
			return nil, err
		}
		tlsConfig.RootCAs = x509.NewCertPool()
		tlsConfig.RootCAs.AppendCertsFromPEM(ca)
	}
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	req, err := http.NewRequest(method, "https://"+addr+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/yaml")
	return httpClient.Do(req)
}

func postExplain(addr, token, body string) (*http.Response, error) {
	return request(http.MethodPost, addr, hub.ExplainPath, token, body, false)
}

// expectStatus waits until method path at addr answers want.
func expectStatus(t *testing.T, method, addr, path, token, body string, insecure bool, want int) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("%s %s%s answers %d", method, addr, path, want), func() string {
		resp, err := request(method, addr, path, token, body, insecure)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		if resp.StatusCode != want {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			return fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(msg))
		}
		return ""
	})
}

// TestExplainAuthenticatesAndAuthorizes: /explain answers 401 without a
// token and with a malformed one, 403 to a caller whose token the API server accepts but who may not
// POST /explain, and 200 to one bound to ClusterRole fleetpolicy-explain.
func TestExplainAuthenticatesAndAuthorizes(t *testing.T) {
	startHub(t)
	body := testkit.PolicyDoc("explain-auth", "p", nil)
	expectStatus(t, http.MethodPost, webhookAddr(), hub.ExplainPath, "", body, false, http.StatusUnauthorized)
	// A token the API server rejects (a malformed one) is unauthenticated.
	expectStatus(t, http.MethodPost, webhookAddr(), hub.ExplainPath, "not-a-token", body, false, http.StatusUnauthorized)
	expectStatus(t, http.MethodPost, webhookAddr(), hub.ExplainPath, serviceAccountToken(t, "nobody", ""), body, false, http.StatusForbidden)
	expectStatus(t, http.MethodPost, webhookAddr(), hub.ExplainPath, serviceAccountToken(t, "explainer", "fleetpolicy-explain"), body, false, http.StatusOK)
}

// TestExplainAndMetricsServedApart runs a hub whose /explain binds apart from
// the admission webhook and whose metrics are served over HTTPS: /explain is
// then gone from the webhook port and answers on its own, and metrics need a
// token allowed to GET /metrics.
func TestExplainAndMetricsServedApart(t *testing.T) {
	explainAddr, metricsAddr := freeAddr(t), freeAddr(t)
	hubtest.Start(t, plane.Config, func(o *hub.ManagerOptions) {
		o.Placement = true
		o.WebhookHost, o.WebhookPort, o.WebhookCertDir = plane.WebhookHost, plane.WebhookPort, plane.WebhookCertDir
		o.ExplainAddr = explainAddr
		o.MetricsAddr, o.MetricsSecure = metricsAddr, true
	})
	body := testkit.PolicyDoc("explain-apart", "p", nil)
	explainer := serviceAccountToken(t, "explainer", "fleetpolicy-explain")
	expectStatus(t, http.MethodPost, explainAddr, hub.ExplainPath, explainer, body, false, http.StatusOK)
	expectStatus(t, http.MethodPost, explainAddr, hub.ExplainPath, "", body, false, http.StatusUnauthorized)
	expectStatus(t, http.MethodPost, webhookAddr(), hub.ExplainPath, explainer, body, false, http.StatusNotFound)

	expectStatus(t, http.MethodGet, metricsAddr, "/metrics", "", "", true, http.StatusUnauthorized)
	expectStatus(t, http.MethodGet, metricsAddr, "/metrics", explainer, "", true, http.StatusForbidden)
	expectStatus(t, http.MethodGet, metricsAddr, "/metrics", serviceAccountToken(t, "scraper", "fleetpolicy-metrics-reader"), "", true, http.StatusOK)
}
