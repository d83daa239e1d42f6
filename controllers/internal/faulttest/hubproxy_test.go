package faulttest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// hubProxy is a test-only TCP proxy that stands between the spoke controller
// and the hub's API server, so that a test can take the hub away from the
// spoke alone: Cut drops every connection through it and refuses new ones, as
// when the spoke's network to the hub fails; Restore accepts again on the same
// address. TLS passes through untouched.
type hubProxy struct {
	target string // the hub API server's host:port
	addr   string // where the spoke connects

	mu       sync.Mutex
	listener net.Listener
	conns    map[net.Conn]struct{}
	serving  sync.WaitGroup
}

// startHubProxy proxies a loopback port to target until the test ends.
func startHubProxy(t *testing.T, target string) *hubProxy {
	t.Helper()
	p := &hubProxy{target: target, conns: map[net.Conn]struct{}{}}
	if err := p.listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Cut(); p.serving.Wait() })
	return p
}

func (p *hubProxy) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.listener, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.serving.Go(func() { p.accept(ln) })
	return nil
}

func (p *hubProxy) accept(ln net.Listener) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return // closed by Cut
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in, out) {
			in.Close()
			out.Close()
			continue
		}
		p.serving.Go(func() { p.pipe(in, out) })
		p.serving.Go(func() { p.pipe(out, in) })
	}
}

// track records a proxied connection's two ends; false when the proxy was cut
// meanwhile.
func (p *hubProxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener == nil {
		return false
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	return true
}

// pipe copies one direction and closes both ends when it ends.
func (p *hubProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
	dst.Close()
	src.Close()
}

// Cut closes the listener and every connection through the proxy.
func (p *hubProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listener != nil {
		p.listener.Close()
		p.listener = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore listens again on the address the spoke knows.
func (p *hubProxy) Restore(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	up := p.listener != nil
	p.mu.Unlock()
	if up {
		t.Fatal(errors.New("hubProxy.Restore: the proxy was not cut"))
	}
	if err := p.listen(p.addr); err != nil {
		t.Fatal(err)
	}
}
