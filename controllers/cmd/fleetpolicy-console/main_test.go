package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

func TestCheckFlags(t *testing.T) {
	cases := []struct {
		name      string
		configure func(*console.Options)
		bind      string
		cert, key string
		want      string // a part of the error; "" for none
	}{
		{name: "the defaults", bind: "127.0.0.1:8090"},
		{name: "IPv6 loopback", bind: "[::1]:8090"},
		{name: "localhost", bind: "localhost:0"},
		{name: "the kubeconfig's identity beyond loopback", bind: "0.0.0.0:8090", want: "is not loopback"},
		{name: "no host is every interface", bind: ":8090", want: "is not loopback"},
		{name: "a token console may listen anywhere with TLS", bind: "0.0.0.0:8090", cert: "c.pem", key: "k.pem",
			configure: func(o *console.Options) { o.Identity = console.IdentityToken }},
		{name: "a token console beyond loopback without TLS", bind: "0.0.0.0:8090",
			configure: func(o *console.Options) { o.Identity = console.IdentityToken }, want: "give --tls-cert-file and --tls-key-file"},
		{name: "a token console on loopback without TLS (behind a proxy)", bind: "127.0.0.1:8090",
			configure: func(o *console.Options) { o.Identity = console.IdentityToken }},
		{name: "an unknown identity", bind: "127.0.0.1:1",
			configure: func(o *console.Options) { o.Identity = "hub" }, want: "--identity must be"},
		{name: "no port", bind: "127.0.0.1", want: "--bind-address"},
		{name: "a certificate without its key", bind: "127.0.0.1:1", cert: "c.pem", want: "go together"},
		{name: "a page larger than the largest", bind: "127.0.0.1:1",
			configure: func(o *console.Options) { o.PageSize = 1000 }, want: "--page-size"},
		{name: "no request at once", bind: "127.0.0.1:1",
			configure: func(o *console.Options) { o.MaxInFlight = 0 }, want: "--max-in-flight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := console.DefaultOptions()
			if tc.configure != nil {
				tc.configure(&o)
			}
			err := checkFlags(o, tc.bind, tc.cert, tc.key)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestServe runs the console as the command does, with and without TLS: with
// a certificate (self-signed, made here) it serves HTTPS and the login cookie
// is Secure, so that a browser never sends the token over plain HTTP; without
// one it serves HTTP and the cookie is not Secure (a browser would drop it on
// http://127.0.0.1). Signing in reaches no API server.
func TestServe(t *testing.T) {
	certFile, keyFile, pool := selfSignedCertificate(t)
	for _, tc := range []struct {
		name          string
		cert, key     string
		scheme        string
		secureCookies bool
	}{
		{name: "TLS", cert: certFile, key: keyFile, scheme: "https", secureCookies: true},
		{name: "plain HTTP", scheme: "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := console.DefaultOptions()
			o.Identity = console.IdentityToken
			o.Config, o.Scheme = &rest.Config{Host: "https://127.0.0.1:1"}, scheme.New()
			ctx, cancel := context.WithCancel(context.Background())
			urls, done := make(chan string, 1), make(chan error, 1)
			go func() {
				done <- serve(ctx, o, "127.0.0.1:0", tc.cert, tc.key, func(url string) { urls <- url })
			}()
			var base string
			select {
			case base = <-urls:
			case err := <-done:
				t.Fatalf("serve returned before listening: %v", err)
			}
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve after its context ended: %v", err)
				}
			}()
			if !strings.HasPrefix(base, tc.scheme+"://") {
				t.Fatalf("URL %q, want %s", base, tc.scheme)
			}
			client := &http.Client{Timeout: 10 * time.Second,
				Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := client.Get(base + "healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || (resp.TLS != nil) != (tc.scheme == "https") {
				t.Fatalf("GET /healthz: %s, TLS %v", resp.Status, resp.TLS != nil)
			}
			req, err := http.NewRequest(http.MethodPost, base+"login", strings.NewReader(url.Values{"token": {"t"}}.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", strings.TrimSuffix(base, "/"))
			resp, err = client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			cookies := resp.Cookies()
			if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 {
				t.Fatalf("POST /login: %s, cookies %v", resp.Status, cookies)
			}
			if cookies[0].Secure != tc.secureCookies {
				t.Errorf("the login cookie's Secure is %v, want %v", cookies[0].Secure, tc.secureCookies)
			}
		})
	}
}

// selfSignedCertificate writes a certificate for 127.0.0.1 and its key to
// files and returns them with a pool that trusts the certificate.
func selfSignedCertificate(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleetpolicy-console"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
