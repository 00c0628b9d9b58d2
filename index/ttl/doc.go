// Package ttl measures, advises and controls the lifetime of the router's
// speculative index entries: the predictions, made on each routing decision,
// that the chosen endpoint will soon hold the prompt's blocks.
//
// A Controller follows each decision from Begin (the scorer's commit) through
// the index's Outcomes, named by the one vocabulary of endings (confirmed,
// early_expiry: confirmed within the grace window after the TTL expired,
// stale_expiry, dropped), to the response's Usage (did the engine really serve the
// predicted prefix from cache). From the route-to-confirmation latencies it
// advises T = Lq + J: the configured percentile of latency plus the
// subscriber backlog and a jitter allowance, rounded after the arithmetic and
// capped by the longest stale window the operator accepts. It prices that
// advice as exposure (routed rate x failed-prediction probability x T, and
// the same weighted by prefix tokens). In static mode the TTL is fixed, in
// advise mode the advice is only exported, in adaptive mode each
// (endpoint, model) TTL moves towards its advice in bounded steps with a
// hysteresis band.
//
// A freshness guard pauses speculation (TTL 0, trust 0) for an endpoint whose
// event stream is stale or disconnected (judged against the silence limit its
// FreshnessSource reports), or has stayed silent after routes that should have
// made it store blocks for longer than the confirmation latency the TTL covers
// (the advised TTL plus slack, capped by the silence limit): a longer TTL never
// stands in for a broken event pipeline.
//
// # Concurrency
//
// A Controller is safe for concurrent use. TTL reads an atomic; Trust, Begin,
// Usage and Observe take one short per-shard or per-series mutex and never
// block or do I/O, so Observe may run on the event goroutine as the index's
// Observer. Run owns the periodic work (advice, adaptive moves, freshness
// re-judging, forgetting expired decisions) and returns when its context is
// done; Report and Handler may be called at any time.
//
// # Ownership
//
// The Controller copies the Route it is given. It keeps per-decision records
// for at most MaxStale + Grace + a margin (longer only for routes that used a
// prediction, until their Usage or UsageTimeout), at most MaxDecisions of
// them, and at most MaxSeries (endpoint, model) pairs; what does not fit is
// counted, not kept. It never sees prompt text, token ids or block keys.
package ttl
