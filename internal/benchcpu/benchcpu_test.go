package benchcpu

import (
	"runtime"
	"testing"
	"time"
)

func TestNowAdvancesWithWork(t *testing.T) {
	m := Start()
	deadline := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	if got := m.Elapsed(); got <= 0 {
		t.Fatalf("CPU time after %d busy iterations = %v, want > 0", x, got)
	}
}

func TestSleepCostsLittleCPU(t *testing.T) {
	m := Start()
	time.Sleep(50 * time.Millisecond)
	if got := m.Elapsed(); got >= 40*time.Millisecond {
		t.Fatalf("CPU time across a 50ms sleep = %v, want well under it", got)
	}
}

func BenchmarkMeter(b *testing.B) {
	m := Start()
	for b.Loop() {
		_ = Now()
	}
	m.Report(b)
}

func TestThreadNowAdvancesWithWork(t *testing.T) {
	// Pinned, as ThreadNow's callers must be: unpinned, the goroutine may
	// move to another thread between the two readings (CI once saw -17 ms).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := ThreadNow()
	deadline := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	if got := ThreadNow() - start; got <= 0 {
		t.Fatalf("thread CPU time after %d busy iterations = %v, want > 0", x, got)
	}
}
