// Package scorer is warmroute's decision pipeline: for a parsed request it finds
// the model's pool, restricts it to the gateway's subset hint, weighs the
// candidates and returns a Decision that the caller commits once Envoy has been
// told, and releases when the response ends.
//
// # Concurrency
//
// Scorer, Pools and Load are safe for concurrent use. A Decision belongs to one
// request stream; its Commit and Release may be called from any goroutine and
// Release is idempotent.
package scorer
