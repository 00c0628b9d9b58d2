// Package gapsweep validates a speculative-index TTL with paired request
// gaps, as the TTL design asks: it sends pairs of streaming completions that
// share a long exact prefix and differ only in a short suffix, separated by
// gaps below the measured confirmation p50, near p95, near the current TTL
// and just beyond it, and reports for each second request what the router's
// decision rested on (prediction, confirmed event or no indexed match), the
// endpoints chosen, the uncached prefill tokens the engine reported, the time
// to first token, and a verdict.
//
// Every pair starts with a fresh random nonce, so pairs never warm each
// other; block size and cache identity (model, LoRA adapter, cache salt) are
// fixed for a sweep, and a sweep refuses to run on when the router reports a
// different block size, since changed matched lengths would then be mistaken
// for timing effects.
//
// The package is a client: it runs no server and registers no metrics. A
// sweep is bounded by a request budget, checked before the first request, and
// by a deadline, after which it stops and reports what it measured.
package gapsweep
