// Package index keeps which endpoint holds which KV-cache block, so the router
// can send a request where its prompt's prefix is already cached.
//
// It turns token ids into chained 64-bit block keys (AppendKeys), records
// confirmed blocks from engine events (Store, Remove, ClearRank, ClearEndpoint)
// and speculative blocks predicted by the router's own decisions (Speculate),
// and answers, per candidate endpoint, how many leading blocks of a prompt it
// holds (Lookup). Memory is bounded in bytes; when the bound is reached the
// least recently useful keys are evicted.
//
// # Entries
//
// A confirmed entry is reference counted per (endpoint, data-parallel rank,
// key) and per medium, because an engine may store the same block twice and
// remove each copy separately. A speculative entry belongs to an endpoint (the
// router cannot know which rank will serve), carries the DecisionID that
// created it and expires after the TTL the caller chose. Both kinds coexist for
// the same endpoint and key; a confirming Store ends the speculative entry and
// reports an Outcome with the latency since the decision to the Observer.
// Expired entries linger for Options.Grace, unmatchable, so a late confirmation
// is still reported (as EarlyExpiry: the TTL expired too early) rather than
// lost; after that they are reported as StaleExpiry.
//
// Router replicas share predictions: SpeculateAt inserts a local prediction
// with explicit decision and expiry times so that they can be sent to the
// other replicas, which apply them with SpeculateRemote. A remote entry
// matches and is confirmed like a local one, but its outcomes carry
// Outcome.Remote and are counted apart, so that each replica accounts only
// for its own decisions. One (endpoint, key) has at most one entry: whichever
// prediction came first keeps it, later ones only extend its expiry.
//
// # Concurrency
//
// Index is safe for concurrent use. Keys are spread over shards, each a
// single-threaded core behind its own RWMutex. A write batch (an engine
// message's plan of at most 64 blocks, a Store or Remove batch, a decision's
// speculative inserts) locks the shards of its keys together, always in
// ascending shard order, and so does Lookup, with read locks, for eight keys
// at a time: no cycle of waits can form, a hold lasts one batch
// (microseconds), and a batch's memory misses overlap. Events for one
// (endpoint, rank) are serialized by that holder's mutex, which is taken
// before any shard lock, never after. The Observer is called after all
// locks are released, on the goroutine that made the call; it must not
// block.
//
// # Ownership
//
// The index copies what it keeps: callers may reuse the slices they pass to
// Store, Remove, Speculate, SpeculateAt, SpeculateRemote and Lookup as soon as the call returns. Slices
// returned by AppendKeys and Lookup belong to the caller. The index does no
// I/O and starts no goroutines; expiry happens on writes and on Sweep, which
// the owner calls periodically.
package index
