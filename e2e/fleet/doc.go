// Package fleet runs warmroute's routing core against modelled engines in
// virtual time, so the speculative-TTL policies can be compared over many
// seeds in seconds instead of hours.
//
// The router side is the real code: scorer.Scorer, index.Index and the
// index/ttl Controller (static, advise and adaptive modes, the freshness
// guard), all on one virtual clock. The engines are a model, not the
// simulator process: each has MaxRunning slots, a prefix cache of blocks,
// chunked prefill that makes a chunk's blocks cacheable only once it has been
// computed, and the simulator's cost model (TTFT + prefill per uncached token
// + decode per token). A chunk's BlockStored reaches the router after an
// event latency drawn per endpoint (order kept per endpoint, as a relay
// keeps it); heartbeats arrive every HeartbeatInterval while relays are up.
// Silent failures store no block and send no error. Everything random is
// drawn from the run's seed, so a (regime, policy, seed) cell is the same
// workload for every policy; only the scorer's tie-breaking is unseeded.
//
// # Concurrency
//
// A run is single-threaded: the event loop calls the router and the engines
// one event at a time. Separate runs share nothing and may run in parallel.
//
// # Ownership
//
// Run builds and drops everything a run needs; Results are plain values.
package fleet
