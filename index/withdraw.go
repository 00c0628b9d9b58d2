package index

// Withdraw ends decision d's live predictions of keys on endpoint at once,
// with the ending of unconfirmed predictions, StaleExpiry: the request the decision routed failed (an error status, a broken
// stream), so the engine will store none of those blocks, and keeping the
// predictions until their TTL would only route later requests to a cache
// that is not warm. Entries another decision owns are left alone (that
// request may still store the block). It returns how many entries ended.
func (ix *Index) Withdraw(endpoint string, keys []Key, d DecisionID) int {
	ep, ok := ix.eps.lookup(endpoint)
	if !ok {
		return 0
	}
	now := ix.now()
	var out pending
	ended := 0
	for _, k := range keys {
		s := ix.shardOf(k)
		s.mu.Lock()
		if s.c.spec.withdraw(k, ep, d, now, &out) {
			ended++
		}
		s.mu.Unlock()
	}
	ix.stats.withdrawn.Add(int64(ended))
	ix.report(out)
	return ended
}

// withdraw ends ep's prediction of key if decision d made it.
func (t *specTable) withdraw(key Key, ep uint32, d DecisionID, now int64, out *pending) bool {
	if t.n == 0 {
		return false
	}
	at, prev := t.find(key, ep)
	if at == 0 || t.at(at).decision != d || t.at(at).remote() {
		return false
	}
	t.end(key, at, prev, StaleExpiry, now, out)
	return true
}
