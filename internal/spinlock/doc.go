// Package spinlock is a reader/writer mutex that waits a short while
// without sleeping before it blocks.
//
// The index's shard locks are held for microseconds: a Lookup batch, an
// engine message's plan of blocks, a decision's speculative inserts. A
// sync.RWMutex that finds one held spins only briefly (a writer's inner
// mutex) or not at all (a reader behind a writer, a writer behind readers)
// and then parks the goroutine. Its release readies the waiter on the
// releasing goroutine's own processor, where it runs once that goroutine
// blocks or yields, or once another processor's thread, asleep in the
// kernel, is woken and takes it. An engine message's writer does neither:
// it goes on to its next plan. BenchmarkHandoff measures this: behind a
// holder that keeps working 20 µs after its Unlock, a parked waiter
// resumes a median 20.7 µs after the release, a spinning one 0.5 µs.
// Under concurrent ingestion most decisions meet a held shard, so their
// tail latency was mostly these waits (the index's BenchmarkContention).
//
// RWMutex therefore retries TryLock (or TryRLock) for up to Spin before
// it falls back to the blocking call, yielding its processor between
// tries (runtime.Gosched), so a goroutine that could run there, the
// holder included when GOMAXPROCS is 1, is not kept from it. A waiter
// that gave up spinning blocks as sync.RWMutex does, so a writer behind a
// stream of readers still gets the lock: while spinning it has not yet
// announced itself, and readers keep coming for at most Spin.
//
// The Go standard library has no such lock, and sync.RWMutex's spinning
// is not configurable; the type embeds one and only changes how Lock and
// RLock wait.
package spinlock
