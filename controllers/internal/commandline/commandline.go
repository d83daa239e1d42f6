package commandline

import (
	"net"
	"os"
	"runtime/pprof"
)

// Loopback says whether addr, a host:port, listens on this machine alone
// ("127.0.0.1:6060", "[::1]:6060", "localhost:6060"). An address without a
// host (":6060", every interface) or with any other host is not loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// StartCPUProfile starts Go's CPU profile of the process into the file path
// (created or truncated) and returns what stops it and flushes the file; with
// path empty it starts nothing and stop does nothing. stop may be called more
// than once.
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
