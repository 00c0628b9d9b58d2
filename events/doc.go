// Package events carries KV-cache events from inference engines to every
// router: it decodes vLLM and SGLang payloads, relays an engine's ZMQ stream
// to NATS (filling gaps from the engine's replay socket and announcing
// explicit resets when it cannot), and, on the router side, follows the
// streams per model, checks sequence continuity per Source, applies batches
// in order to a Sink and tracks freshness and membership.
//
// Nothing is lost silently: every gap, reset, malformed payload, overflow and
// expiry is counted (metrics.go) and, when it makes a Source's state unknown,
// clears that Source in the Sink.
//
// # Wire
//
// The subjects, headers and heartbeat schema are in package api. A batch
// message carries the engine's msgpack payload unchanged; a reset message
// has no body and tells routers to clear the Source and resume at the
// sequence in its header. JetStream replay for a restarting router will hook
// in where Subscriber subscribes (a stream consumer feeding the same queue);
// it is not implemented yet.
//
// # Concurrency
//
// DecodeBatch is a pure function; a Batch is owned by one goroutine and its
// slices are reused by the next decode into it. A Relay runs three goroutines
// under Run (engine receive loop, NATS publish loop, heartbeat loop) that
// share only the bounded outbox and atomics; Run waits for all of them. A
// Subscriber's NATS handlers never block: they enqueue into a bounded channel
// (overflow counted) drained by the single apply goroutine of Run, which is
// the only caller of the Sink and Membership. Freshness and Sources may be
// called from any goroutine.
//
// # Ownership
//
// The caller owns the *nats.Conn passed to NewRelay and NewSubscriber and
// closes it after Run returns. A Relay owns its ZMQ sockets and the
// Subscriber owns its NATS subscriptions; both release them before Run
// returns. Batches passed to Sink.ApplyBatch are borrowed for the duration of
// the call. EmbeddedServer owns the in-process NATS server until Close.
package events
