package main

import (
	"os"
	"strings"
	"testing"
)

// TestNoSelfSignedCertificateInACluster: out of a cluster a missing webhook
// certificate is generated; in one it is an error naming --webhook-cert-dir.
func TestNoSelfSignedCertificateInACluster(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // controller-runtime's default folder is empty
	if _, _, err := localWebhookCertDir(true); err == nil || !strings.Contains(err.Error(), "--webhook-cert-dir") {
		t.Fatalf("in a cluster: %v, want an error naming --webhook-cert-dir", err)
	}
	dir, generated, err := localWebhookCertDir(false)
	if err != nil || !generated {
		t.Fatalf("out of a cluster: %q, generated %v, %v; want a generated certificate", dir, generated, err)
	}
	_ = os.RemoveAll(dir)
}
