package spinlock

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// locker is what both mutexes compared here offer.
type locker interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()
}

// TestExclusion checks that writers exclude each other and readers: each
// writer sets two fields one after the other, and a reader that ever sees
// them differ, or a lost increment, fails the test.
func TestExclusion(t *testing.T) {
	for _, tc := range []struct {
		name             string
		writers, readers int
		procs            int
	}{
		{"writers", 4, 0, 2},
		{"mixed", 2, 4, 2},
		{"readers", 1, 6, 2},
		{"one-proc", 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			var m RWMutex
			var a, b int
			const rounds = 2000
			var torn atomic.Int64
			var wg sync.WaitGroup
			for range tc.writers {
				wg.Go(func() {
					for range rounds {
						m.Lock()
						a++
						runtime.Gosched() // let a reader try in between
						b++
						m.Unlock()
					}
				})
			}
			for range tc.readers {
				wg.Go(func() {
					for range rounds {
						m.RLock()
						if a != b {
							torn.Add(1)
						}
						m.RUnlock()
					}
				})
			}
			wg.Wait()
			if torn.Load() != 0 {
				t.Errorf("readers saw a half-done write %d times", torn.Load())
			}
			if want := tc.writers * rounds; a != want || b != want {
				t.Errorf("a, b = %d, %d after %d writes", a, b, want)
			}
		})
	}
}

// TestWaitsPastSpin holds the lock for several times Spin, so the waiter
// gives up spinning and blocks, and checks that it gets the lock only once
// it is released, for each pairing of holder and waiter.
func TestWaitsPastSpin(t *testing.T) {
	for _, tc := range []struct {
		name          string
		hold, acquire func(*RWMutex)
		release       func(*RWMutex)
	}{
		{"writer-behind-writer", (*RWMutex).Lock, (*RWMutex).Lock, (*RWMutex).Unlock},
		{"reader-behind-writer", (*RWMutex).Lock, (*RWMutex).RLock, (*RWMutex).Unlock},
		{"writer-behind-reader", (*RWMutex).RLock, (*RWMutex).Lock, (*RWMutex).RUnlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m RWMutex
			var released atomic.Bool
			tc.hold(&m)
			done := make(chan bool)
			go func() {
				tc.acquire(&m)
				done <- released.Load()
			}()
			time.Sleep(5 * Spin)
			released.Store(true)
			tc.release(&m)
			select {
			case ok := <-done:
				if !ok {
					t.Error("the waiter got the lock while it was held")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiter never got the lock after its release")
			}
		})
	}
}

// TestReadersShare checks that a reader spinning behind nothing but other
// readers gets the lock at once: two readers hold it together.
func TestReadersShare(t *testing.T) {
	var m RWMutex
	m.RLock()
	got := make(chan struct{})
	go func() {
		m.RLock()
		close(got)
	}()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("a second reader waited for the first")
	}
	m.RUnlock()
	m.RUnlock()
	if !m.TryLock() {
		t.Fatal("not unlocked after both readers left")
	}
}

// BenchmarkUncontended compares the uncontended paths with sync.RWMutex:
// a Lock/Unlock or RLock/RUnlock pair on a lock no one else holds.
func BenchmarkUncontended(b *testing.B) {
	for _, mu := range []struct {
		name string
		m    locker
	}{{"sync", new(sync.RWMutex)}, {"spinlock", new(RWMutex)}} {
		b.Run(mu.name+"/write", func(b *testing.B) {
			for b.Loop() {
				mu.m.Lock()
				mu.m.Unlock()
			}
		})
		b.Run(mu.name+"/read", func(b *testing.B) {
			for b.Loop() {
				mu.m.RLock()
				mu.m.RUnlock()
			}
		})
	}
}

// BenchmarkHandoff measures what a waiter loses to waking up: a holder
// goroutine keeps the lock for about 20 µs of work (a shard plan's hold),
// then works 20 µs more without it (its next plan), while the benchmark's
// goroutine waits for it; each op reports the
// time from the holder's Unlock to the waiter's return from Lock
// (handoff-p50-ns, handoff-p99-ns), for sync.RWMutex and for RWMutex. Run
// it with GOMAXPROCS=2 or more, so the holder and the waiter run at once.
func BenchmarkHandoff(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2: with one processor the waiter cannot wait while the holder works")
	}
	for _, mu := range []struct {
		name string
		m    locker
	}{{"sync", new(sync.RWMutex)}, {"spinlock", new(RWMutex)}} {
		b.Run(mu.name, func(b *testing.B) { benchHandoff(b, mu.m) })
	}
}

func benchHandoff(b *testing.B, m locker) {
	held, stop := make(chan struct{}), make(chan struct{})
	var releasedAt atomic.Int64 // UnixNano of the holder's last Unlock
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-held:
			}
			m.Lock()
			held <- struct{}{} // the waiter may start waiting
			work(20 * time.Microsecond)
			releasedAt.Store(time.Now().UnixNano())
			m.Unlock()
			// An engine message's writer goes on to its next plan rather
			// than blocking, so its processor is not free to run the
			// waiter it has just readied.
			work(20 * time.Microsecond)
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		held <- struct{}{}
		<-held
		m.Lock()
		lat = append(lat, time.Duration(time.Now().UnixNano()-releasedAt.Load()))
		m.Unlock()
	}
	close(stop)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "handoff-p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "handoff-p99-ns")
}

// work busies its goroutine for about d without yielding.
func work(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
	}
}
