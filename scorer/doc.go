// Package scorer is warmroute's decision pipeline: for a parsed request it
// finds the model's pool, restricts it to the gateway's subset hint, and
// weighs the candidates into a Decision that the caller commits once Envoy
// has been told, and releases when the response ends.
//
// # Pipeline
//
// For a pool with a tokenizer (Options.Tokens) and an index (Options.Index):
// tokens (a chat request's rendered template, encoded without special tokens;
// a completion prompt with them; token-id prompts as given; of several
// prompts the first) -> block keys under the pool's identity (pool name or
// LoRA adapter, plus cache_salt) -> index.Lookup over the candidates ->
// components -> choice. Each stage is timed into
// warmroute_scorer_stage_duration_seconds. A pool without a tokenizer, or a
// prompt that cannot be tokenized, is routed on load alone and the decision's
// Reason says so.
//
// # Scoring
//
// Components are one-method types that score every candidate in [0,1]:
// the cached prefix (confirmed blocks by medium weight, speculative blocks by
// the TTL policy's trust), router-tracked load (in-flight requests and queued
// prefill tokens) and, when wired, the engines' own gauges (EngineLoad). The
// combiner clamps each and weighs them (ScoringConfig). Two
// guards keep replicas and hot prefixes from herding: a prefix score is
// discounted once its endpoint carries more than HerdMargin in-flight
// requests above the least-loaded candidate, and candidates within
// TieEpsilon of the best are chosen among at random.
//
// # Speculation
//
// Decision.Commit inserts speculative index entries for the blocks the chosen
// endpoint lacks, for the TTL the TTLPolicy gives (none while it pauses
// speculation), and calls its Begin; Decision.Settle, which the caller runs
// once the request has its answer (Release at the latest), ends the
// predictions that came due in the index shards those inserts wrote. StaticTTL is the policy without a
// controller. With Options.Predictions the same prediction, stamped by the
// index's clock with its absolute expiry, goes to a PredictionSink that
// shares it with the other router replicas without blocking.
//
// # Concurrency
//
// Scorer, Pools, Load and the Tokens implementations are safe for concurrent
// use. A Decision belongs to one request stream; its methods may be called
// from any goroutine and each takes effect at most once. Decision.Done ends
// its use and recycles its memory (keys included) for a later Pick: nothing
// may call or read the decision after it. Scorer.Run owns the
// pipeline's goroutines (index sweeps, tokenizer drift checks); nothing else
// in the package starts one.
package scorer
