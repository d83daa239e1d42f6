package localplane

import (
	"os"
	"runtime"
	"testing"
)

// TestPeakRSS: the peak grows when the process touches more memory.
func TestPeakRSS(t *testing.T) {
	before, err := PeakRSS(os.Getpid())
	if err != nil || before <= 0 {
		t.Fatalf("PeakRSS = %d, %v", before, err)
	}
	block := make([]byte, 64<<20)
	for i := range block {
		block[i] = 1
	}
	after, err := PeakRSS(os.Getpid())
	runtime.KeepAlive(block)
	if err != nil || after < before+32<<20 {
		t.Errorf("after touching 64 MiB the peak went from %d to %d (%v)", before, after, err)
	}
	if _, err := PeakRSS(-1); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
