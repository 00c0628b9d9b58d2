// Package benchcpu reports a benchmark's process CPU time per operation
// (cpu-ns/op) beside its wall time. On a shared machine wall time includes
// the time other processes held the cores; CPU time is what this process
// spent, garbage collection and background goroutines included.
package benchcpu

import (
	"syscall"
	"testing"
	"time"
)

// Now returns the CPU time, user plus system, that this process has used.
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Meter measures one benchmark run. Start it right before the timed loop
// and call Report right after: setup outside the pair is not counted.
//
// A Meter is owned by one benchmark function; the zero value is not usable.
type Meter struct {
	start time.Duration
}

// Start begins measuring.
func Start() Meter { return Meter{start: Now()} }

// Elapsed is the CPU time since Start.
func (m Meter) Elapsed() time.Duration { return Now() - m.start }

// Report adds cpu-ns/op, the CPU time since Start divided by b.N.
func (m Meter) Report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(m.Elapsed().Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
