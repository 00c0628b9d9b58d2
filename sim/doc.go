// Package sim is an OpenAI-compatible model-server simulator: it answers
// /v1/completions and /v1/chat/completions (JSON and SSE streaming) with
// deterministic text, charges a configurable prefill and decode cost, limits
// how many requests run at once and exposes vLLM's queue gauges, so the router
// can be exercised end to end without GPUs.
//
// The HTTP layer (Server) only decodes requests, injects faults and writes
// responses; everything about a request's life on the "GPU" belongs to the
// Engine: admission into a bounded running set, tokenization, prefill and
// decode. A Sequence is one admitted request; it is where a prefix cache's
// block allocation and a KV event publisher attach, without the HTTP layer
// changing.
//
// # Concurrency
//
// Server and Engine are safe for concurrent use. A Sequence belongs to the one
// request that created it and is not safe for concurrent use.
//
// # Ownership
//
// Server.Serve owns the http.Server and its serving goroutine and returns only
// after both have stopped. Each Sequence holds one running slot of its Engine
// from Submit until Close; the HTTP layer closes every Sequence it obtains, so
// the running and waiting gauges return to zero when clients go away.
//
// sim must not be imported by production packages; it may import api.
package sim
