package ttl

import "time"

// numBuckets splits a window into this many time buckets; counts leave the
// window a bucket at a time, so the window is exact to 1/numBuckets.
const numBuckets = 10

// tally counts what happened to one series' predictions in one bucket.
// Blocks are speculative entries; decisions are routing decisions that
// created at least one.
type tally struct {
	confirmed, late, stale, dropped int64 // blocks, by ending
	begun                           int64 // decisions begun
	closed, failed                  int64 // decisions whose every block ended; failed: some stale
	staleTokens                     int64 // predicted tokens in stale blocks
}

func (t *tally) add(u *tally) {
	t.confirmed += u.confirmed
	t.late += u.late
	t.stale += u.stale
	t.dropped += u.dropped
	t.begun += u.begun
	t.closed += u.closed
	t.failed += u.failed
	t.staleTokens += u.staleTokens
}

// resolved is how many blocks were judged: confirmed (on time or late) or
// stale. Dropped blocks say nothing about the prediction.
func (t *tally) resolved() int64 { return t.confirmed + t.late + t.stale }

// sample is one route-to-confirmation latency and when it was taken.
type sample struct {
	at int64
	d  time.Duration
}

// window is a sliding window of tallies and latencies. Latencies are kept
// exactly in a bounded ring rather than in a streaming sketch: the advisor
// needs a high percentile over recent samples only, a ring of a few thousand
// durations gives it exactly (no sketch error in the tail that sets the TTL),
// drops old samples for free, and costs 16 bytes a sample.
// It is not safe for concurrent use; series guards it.
type window struct {
	span    int64 // bucket width, ns
	buckets [numBuckets]tally
	stamps  [numBuckets]int64 // which span each bucket currently counts
	first   int64             // first activity, so rates are right before the window fills
	ring    []sample
	next    int // ring write position
	full    bool
}

func newWindow(width time.Duration, samples int) window {
	return window{span: max(int64(width)/numBuckets, 1), ring: make([]sample, 0, samples)}
}

// bucket returns the tally for time now, resetting a reused bucket.
func (w *window) bucket(now int64) *tally {
	if w.first == 0 {
		w.first = now
	}
	n := now / w.span
	i := int(n % numBuckets)
	if i < 0 {
		i += numBuckets
	}
	if w.stamps[i] != n {
		w.stamps[i] = n
		w.buckets[i] = tally{}
	}
	return &w.buckets[i]
}

// sum totals the buckets still inside the window at now.
func (w *window) sum(now int64) tally {
	var t tally
	n := now / w.span
	for i := range w.buckets {
		if s := w.stamps[i]; s > n-numBuckets && s <= n {
			t.add(&w.buckets[i])
		}
	}
	return t
}

// elapsed is how much of the window has seen activity, for turning counts
// into rates; never less than one bucket.
func (w *window) elapsed(now int64) time.Duration {
	width := w.span * numBuckets
	e := min(now-w.first, width)
	return time.Duration(max(e, w.span))
}

func (w *window) observe(now int64, d time.Duration) {
	if cap(w.ring) == 0 {
		return
	}
	if !w.full {
		w.ring = append(w.ring, sample{now, d})
		w.full = len(w.ring) == cap(w.ring)
		return
	}
	w.ring[w.next] = sample{now, d}
	w.next = (w.next + 1) % len(w.ring)
}

// latencies appends to dst the samples taken within the window at now.
func (w *window) latencies(dst []time.Duration, now int64) []time.Duration {
	oldest := now - w.span*numBuckets
	for _, s := range w.ring {
		if s.at > oldest && s.at <= now {
			dst = append(dst, s.d)
		}
	}
	return dst
}
