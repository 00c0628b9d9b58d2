package index

// A routing decision's speculative insert is on the request's path: the
// request waits for it before Envoy is told where to send it. Ending the
// predictions that came due in the shards it writes is not (Lookup already
// ignores them), so SpeculateDeferred inserts without it and ExpireAfter,
// called once the request is on its way, does that expiry with the same
// budget speculate gives it. The work is the same; it moves off the wait.

// SpeculateDeferred is SpeculateAt for the continuation of a routed prompt,
// without expiring the due predictions of the shards it writes; the caller
// calls ExpireAfter(p.Keys) next, on the same goroutine once what waits for
// the insert has been answered, so the expiry the insert would have done
// still happens, and still on the request's goroutine. A due prediction no
// longer matches in Lookup, so the delay changes only when its outcome is
// reported, as when a write's expiry budget runs out (writeExpiries).
//
// p.Keys must be a prompt's keys from the first one p.Endpoint does not
// hold confirmed, in order. Each is predicted without checking whether the
// endpoint holds it: an engine reuses only an unbroken cached prefix, so it
// computes and stores every block from that first missing one on for this
// request, even one it still holds a copy of (vLLM does not de-duplicate a
// recomputed block and announces it again, which confirms the prediction;
// SGLang's radix tree cannot hold a block without its parent). Skipping the
// check spares the insert a probe of the confirmed table for each key, a
// cache miss in a large index, on the request's wait. Should the engine not
// recompute a block it holds (another request filled the gap before it, as
// when the scorer's keys start after a confirmed count that a speculative
// stretch interrupted), that prediction ends as StaleExpiry, as any
// unconfirmed one does.
func (ix *Index) SpeculateDeferred(p Prediction) (int, error) {
	return ix.speculateKeys(p.Endpoint, p.Keys, &speculation{d: p.Decision, at: p.DecidedAt.UnixNano(),
		expires: p.ExpiresAt.UnixNano(), deferred: true})
}

// ExpireAfter ends due predictions in the shards of keys, each shard
// write-locked once (ascending) and ending at most writeExpiries, within
// the budget a speculative insert of keys has (writeExpiries plus two per
// key): the expiry SpeculateDeferred left out.
func (ix *Index) ExpireAfter(keys []Key) {
	if len(keys) == 0 {
		return
	}
	now := ix.now()
	out := getPending()
	defer putPending(out)
	budget := writeExpiries + 2*len(keys)
	expire := func(i uint64) {
		if budget == 0 {
			return
		}
		s := &ix.shards[i]
		s.mu.Lock()
		read, _ := s.c.spec.expire(now, ix.grace, min(writeExpiries, budget), out)
		s.mu.Unlock()
		budget -= read
	}
	if len(ix.shards) <= 64 {
		var buf [64]uint64
		for _, i := range ix.sortedShards(keys, buf[:]) {
			expire(i)
		}
	} else {
		// More shards than a bit set holds: shard by shard per batch, as
		// the insert visited them.
		var buf [lookupBatch]uint64
		for base := 0; base < len(keys); base += lookupBatch {
			for _, i := range ix.batchShards(keys[base:min(base+lookupBatch, len(keys))], &buf) {
				expire(i)
			}
		}
	}
	ix.report(*out)
}
