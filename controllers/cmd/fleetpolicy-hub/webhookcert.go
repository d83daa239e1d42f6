package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
)

// controllerRuntimeCertDir is where controller-runtime's webhook server looks
// for tls.crt and tls.key when it is given no folder.
func controllerRuntimeCertDir() string {
	return filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
}

// localWebhookCertDir answers where the webhook's certificate is when
// --webhook-cert-dir is not set: controller-runtime's default folder when it
// holds tls.crt and tls.key, otherwise, out of a cluster, a new temporary
// folder with a self-signed certificate for localhost, 127.0.0.1 and ::1
// (generated is true; the caller removes the folder). In a cluster
// (inCluster) a missing certificate is an error: a self-signed one no API
// server trusts would fail every admission once placement policies exist,
// where a hub that does not start says what is wrong.
func localWebhookCertDir(inCluster bool) (dir string, generated bool, err error) {
	def := controllerRuntimeCertDir()
	if bothExist(filepath.Join(def, "tls.crt"), filepath.Join(def, "tls.key")) {
		return def, false, nil
	}
	if inCluster {
		return "", false, fmt.Errorf("in a cluster the placement webhook needs a certificate: set --webhook-cert-dir to a folder with tls.crt and tls.key (or run with --placement=false)")
	}
	dir, err = os.MkdirTemp("", "fleetpolicy-hub-webhook-")
	if err != nil {
		return "", false, err
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, nil)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "tls.crt"), cert, 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", false, fmt.Errorf("self-signed webhook certificate: %w", err)
	}
	return dir, true, nil
}

// bothExist says whether every path can be stat-ed.
func bothExist(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}
