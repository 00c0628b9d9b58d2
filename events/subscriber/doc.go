// Package subscriber is the router side of the event path: a Subscriber
// follows the KV event streams of some models over NATS, checks sequence
// continuity per Source, applies batches in order to a Sink (IndexSink
// writes them to an index.Index), and turns relay heartbeats into pool
// membership (Discovery). It tracks each Source's freshness and expires a
// Source that stays silent (no batch, no heartbeat) for HeartbeatMisses of
// its heartbeat intervals; it reports that same silence limit to the TTL
// controller's freshness guard (Freshness, a ttl.FreshnessSource), so one
// threshold decides both. A sequence gap clears the Source at once: the
// index is never kept in a state known to be incomplete.
//
// Config is serve's `events:` section: the NATS settings (bus.Config,
// inline), the queue, the heartbeat misses and the prediction share's
// settings (predictions.Config).
//
// # JetStream
//
// With Config.JetStream enabled, a starting Subscriber first subscribes live
// (holding messages in its queue), ensures the stream, applies the stream's
// retained messages through the same sequence checks, then closes Ready and
// drains the queue: messages already replayed are dropped as duplicates by
// sequence, so nothing is applied twice and nothing is missed between the
// two.
//
// # Concurrency
//
// The NATS handlers never block: they enqueue into a bounded channel
// (overflow counted, and seen later as a gap) drained by the single apply
// goroutine that Start starts and Close stops, which is the only caller of
// the Sink and the Membership; the start-up replay runs on that goroutine
// too, before the live loop. Freshness, SourceFreshness, EndpointFreshness,
// EngineLoad, Backlog, Sources and Ready may be called from any goroutine,
// before Start too. IndexSink is safe for concurrent use; Discovery is not
// and relies on that single caller.
//
// # Ownership
//
// The caller owns the *nats.Conn passed to New and closes it after Close.
// The Subscriber owns its NATS subscriptions and releases them before its
// goroutine returns. Batches passed to Sink.ApplyBatch are borrowed for the
// duration of the call. An IndexSink writes to the *index.Index it was given
// and owns nothing; the caller keeps the index. The ordered consumer of a
// replay belongs to the apply goroutine and is stopped before the live loop
// starts.
package subscriber
