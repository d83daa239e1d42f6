package commandline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/commandline"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:6060":   true,
		"127.0.0.2:6060":   true,
		"[::1]:6060":       true,
		"localhost:6060":   true,
		":6060":            false,
		"0.0.0.0:6060":     false,
		"[::]:6060":        false,
		"10.0.0.1:6060":    false,
		"example.com:6060": false,
		"127.0.0.1":        false, // no port
		"":                 false,
	} {
		if got := commandline.Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestStartCPUProfile(t *testing.T) {
	stop, err := commandline.StartCPUProfile("")
	if err != nil {
		t.Fatal(err)
	}
	stop()

	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err = commandline.StartCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("profile %s: %v, %v bytes; want a written profile", path, err, fi)
	}

	if _, err := commandline.StartCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.pprof")); err == nil {
		t.Error("a profile in a missing folder: no error")
	}
}
