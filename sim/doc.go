// Package sim is an OpenAI-compatible model-server simulator: it answers
// /v1/completions and /v1/chat/completions (JSON and SSE streaming) with
// deterministic text, charges a configurable prefill and decode cost, limits
// how many requests run at once and exposes vLLM's queue gauges, so the router
// can be exercised end to end without GPUs.
//
// The HTTP layer (Server) only decodes requests, injects faults and writes
// responses; everything about a request's life on the "GPU" belongs to the
// Engine: admission into a bounded running set, tokenization (a stand-in
// word tokenizer, or the project's tokenizer package so the simulator computes
// the router's ids), prefill against a vLLM-like prefix cache and decode.
//
// The prefix cache is a fixed pool of KV blocks: full blocks are hashed in a
// chain (parent digest, tokens, LoRA name, cache_salt on the first block)
// from a per-process random root, matched longest-prefix first with at least
// one prompt token left to compute, reference-counted while a request runs
// and evicted least recently released first. Every change is published as
// vLLM publishes it: msgpack batches on a ZMQ PUB socket with a replay
// ROUTER socket, through an injectable pipeline of delay, loss and pause.
//
// # Concurrency
//
// Server and Engine are safe for concurrent use. A Sequence belongs to the one
// request that created it and is not safe for concurrent use. The block pool
// is a single-threaded core; the engine's cache locks around it, and also
// numbers and queues event batches under that lock, so the wire order of
// events is the order of the pool changes they describe.
//
// # Ownership
//
// Server.Serve owns the http.Server and its serving goroutine and returns only
// after both have stopped. Each Sequence holds one running slot of its Engine
// from Submit until Close; the HTTP layer closes every Sequence it obtains, so
// the running and waiting gauges return to zero when clients go away.
//
// An Engine with a KV events endpoint owns its ZMQ sockets, the delivery
// goroutine and the replay goroutine from NewEngine until Close, which waits
// for both; Server.Serve closes its engine when it returns, and a Server used
// only through Handler must be closed by its owner.
//
// sim must not be imported by production packages; it may import api and
// tokenizer (events only in tests, to prove its output decodes and relays).
package sim
