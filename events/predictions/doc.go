// Package predictions shares router replicas' speculative predictions over
// NATS (api.PredictionSubject, api.PredictionMessage): a Share publishes its
// replica's committed decisions' predictions (Predicted, the scorer's
// PredictionSink) and applies every other replica's with
// index.SpeculateRemote, keeping the decider's absolute expiry capped at the
// local now plus MaxTTL. Its own messages are recognised by replica id and
// skipped. With Replay, a memory-stored JetStream stream (EnsureStream, age
// limit the maximum stale window) lets a starting replica replay the
// predictions still live; applying one twice is harmless.
//
// Config is serve's `events.predictions:` section; Options add what serve
// derives (replica id, MaxTTL from ttl.maxStale, whether JetStream is on).
//
// # Concurrency
//
// Start owns two goroutines, a publish loop and an apply loop (which replays
// first); Close stops and waits for both. Predicted never blocks (a bounded
// queue, drops counted) and may be called before Start; the NATS handler
// only enqueues.
//
// # Ownership
//
// A Share borrows the *nats.Conn it is built with and the *index.Index it is
// started with; the caller closes the connection after Close. Predicted
// keeps the prediction's Keys slice until it is published, so the caller
// must not modify it.
package predictions
