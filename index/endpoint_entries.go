package index

// EndpointEntries counts what the index holds for one endpoint, for debugging
// and end-to-end checks (see Index.EndpointEntries).
type EndpointEntries struct {
	// Confirmed counts keys that any data-parallel rank of the endpoint holds
	// per engine events; a key held by two ranks counts once, as Lookup sees
	// it.
	Confirmed int
	// Speculative counts live predictions (not yet expired) for the
	// endpoint, local and remote.
	Speculative int
}

// EndpointEntries walks every shard and counts endpoint's confirmed keys and
// live predictions. It costs a pass over the whole index under each shard's
// read lock in turn, so it is for admin and test use, never the request path.
// An endpoint the index never saw has no entries.
func (ix *Index) EndpointEntries(endpoint string) EndpointEntries {
	var out EndpointEntries
	ep, ok := ix.eps.lookup(endpoint)
	if !ok {
		return out
	}
	now := ix.now()
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.RLock()
		out.Confirmed += s.c.countEndpoint(ep)
		out.Speculative += s.c.spec.countLive(ep, now)
		s.mu.RUnlock()
	}
	return out
}

// countEndpoint counts the keys any rank of ep holds.
func (c *core) countEndpoint(ep uint32) int {
	n := 0
	c.keys.all(func(key Key, _ uint32) {
		if c.holdsEndpoint(key, ep) {
			n++
		}
	})
	return n
}

// countLive counts ep's predictions that have not expired at now; entries
// kept past expiry for a late confirmation are not live.
func (t *specTable) countLive(ep uint32, now int64) int {
	if t.n == 0 {
		return 0
	}
	n := 0
	t.heads.all(func(key Key, _ uint32) {
		if at, _ := t.find(key, ep); at != 0 && now < t.at(at).expires {
			n++
		}
	})
	return n
}
