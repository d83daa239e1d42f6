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

// Process is an upstream binary of bin/ (OCM's placement controller, its
// policy add-ons) running against local planes, with everything it writes kept.
type Process struct {
	pid      int
	cancel   context.CancelFunc
	exited   chan struct{}
	exitCode int // set before exited is closed

	mu  sync.Mutex
	log bytes.Buffer
}

// StartProcess starts bin/<name> (built by `make <target>`) with args and the
// extra environment entries env. Stop ends it.
func StartProcess(name, target string, args, env []string) (*Process, error) {
	if shortTest() {
		return nil, ErrShortTest
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(root, "bin", name)
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s is not built (make %s): %w", name, target, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p := &Process{cancel: cancel, exited: make(chan struct{})}
	cmd := exec.CommandContext(runCtx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = p, p
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	p.pid = cmd.Process.Pid
	go func() {
		_ = cmd.Wait()
		p.exitCode = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	return p, nil
}

// FreeAddress is a free local TCP address for a process's listener (port 0
// leaves some upstream servers unset, which they do not survive).
func FreeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Write keeps what the process writes.
func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// Pid is the process's id, for its CPU time and peak RSS (CPUTime, PeakRSS).
func (p *Process) Pid() int { return p.pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitCode is the process's exit code once Exited is closed (-1 when a signal
// ended it).
func (p *Process) ExitCode() int {
	<-p.exited
	return p.exitCode
}

// Log is everything the process wrote.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// LogTail is the last lines the process wrote.
func (p *Process) LogTail(lines int) string {
	all := strings.Split(strings.TrimSpace(p.Log()), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// Stop ends the process and waits for it.
func (p *Process) Stop() {
	p.cancel()
	<-p.exited
}
