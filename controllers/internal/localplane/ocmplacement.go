package localplane

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// OCMPlacementNamespace is the namespace OCM's placement controller is told it
// runs in (its events go there).
const OCMPlacementNamespace = "open-cluster-management-hub"

// OCMPlacement is OCM's placement controller (bin/ocm-placement, `make
// ocm-placement`) running against a plane: it writes the PlacementDecisions
// of the plane's Placements, as on a real hub.
type OCMPlacement struct {
	cancel context.CancelFunc
	exited chan struct{}

	mu  sync.Mutex
	log bytes.Buffer
}

// StartOCMPlacement starts OCM's placement controller against p, without
// leader election, serving its metrics on a free local port. Stop ends it.
func StartOCMPlacement(ctx context.Context, p *Plane) (*OCMPlacement, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(root, "bin", "ocm-placement")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("OCM's placement controller is not built (make ocm-placement): %w", err)
	}
	if err := EnsureNamespace(ctx, p.Client, OCMPlacementNamespace); err != nil {
		return nil, err
	}
	// Port 0 would leave its server unset, which it does not survive.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	listen := l.Addr().String()
	_ = l.Close()

	runCtx, cancel := context.WithCancel(context.Background())
	o := &OCMPlacement{cancel: cancel, exited: make(chan struct{})}
	cmd := exec.CommandContext(runCtx, binary, "controller", "--kubeconfig", p.KubeconfigPath,
		"--namespace", OCMPlacementNamespace, "--disable-leader-election", "--listen", listen)
	cmd.Stdout, cmd.Stderr = o, o
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(o.exited) }()
	return o, nil
}

// Write keeps what the controller writes.
func (o *OCMPlacement) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.log.Write(b)
}

// Exited is closed when the controller has exited.
func (o *OCMPlacement) Exited() <-chan struct{} { return o.exited }

// Log is everything the controller wrote.
func (o *OCMPlacement) Log() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.log.String()
}

// LogTail is the last lines the controller wrote.
func (o *OCMPlacement) LogTail(lines int) string {
	all := strings.Split(strings.TrimSpace(o.Log()), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// Stop ends the controller and waits for it.
func (o *OCMPlacement) Stop() {
	o.cancel()
	<-o.exited
}
