package spinlock

import (
	"runtime"
	"sync"
	"time"
)

// Spin is how long Lock and RLock retry before they block. It is longer
// than an engine message's plan holds its shards (about 20 µs of CPU for 16
// stores and 16 removals in the index's BenchmarkContention), and was
// chosen with that benchmark: spinning 10 µs left decisions' p99 at
// 330-440 µs, 30 µs and 100 µs brought it to 180-270 µs (from 590-600 µs
// without spinning).
const Spin = 30 * time.Microsecond

// checkEvery is how many tries pass between two readings of the clock.
const checkEvery = 16

// RWMutex is a sync.RWMutex whose Lock and RLock spin for up to Spin
// before blocking (see the package doc). The zero value is unlocked; it
// must not be copied after first use. Unlock, RUnlock, TryLock and
// TryRLock are sync.RWMutex's.
type RWMutex struct {
	sync.RWMutex
}

// Lock locks m for writing.
func (m *RWMutex) Lock() {
	if m.TryLock() {
		return
	}
	deadline := time.Now().Add(Spin)
	for n := 1; ; n++ {
		runtime.Gosched()
		if m.TryLock() {
			return
		}
		if n%checkEvery == 0 && time.Now().After(deadline) {
			break
		}
	}
	m.RWMutex.Lock()
}

// RLock locks m for reading.
func (m *RWMutex) RLock() {
	if m.TryRLock() {
		return
	}
	deadline := time.Now().Add(Spin)
	for n := 1; ; n++ {
		runtime.Gosched()
		if m.TryRLock() {
			return
		}
		if n%checkEvery == 0 && time.Now().After(deadline) {
			break
		}
	}
	m.RWMutex.RLock()
}
