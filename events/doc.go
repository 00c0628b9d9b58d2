// Package events carries KV-cache events from inference engines to every
// router: it decodes vLLM and SGLang payloads, relays an engine's ZMQ stream
// to NATS (filling gaps from the engine's replay socket and announcing
// explicit resets when it cannot), and, on the router side, follows the
// streams per model, checks sequence continuity per Source, applies batches
// in order to a Sink (IndexSink writes them to an index.Index) and tracks
// freshness and membership (Discovery turns relay heartbeats into routable
// endpoints).
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
// sequence in its header.
//
// # Relay start-up
//
// A relay that does not know where the engine's stream stands (it just
// started, or the engine's sequence started over) reads the engine's replay
// buffer from seq 0 and republishes it with the real sequence numbers, so
// routers regain the blocks cached before the relay looked. The engine's
// first batch (seq 0) carries api.EventStreamStartHeader: a router clears
// whatever else it holds for the Source (a vanished relay's stream) and
// applies from there; after an engine restart a reset at seq 0 goes first.
// Live batches wait in the events socket during the replay and those it
// covered are dropped as duplicates. vLLM keeps only the last buffer_steps
// batches (default 10000): once an engine has published more, the buffer no
// longer reaches seq 0, the earlier state is unknowable, and the relay
// publishes a reset at the buffer's first seq before what it holds. Both
// outcomes are counted (relay_resyncs_total).
//
// After its engine socket reconnects, a relay asks the replay buffer for the
// last batch it forwarded: the same bytes prove the same engine, and the
// stream continues; otherwise (an engine restarted while the socket was
// down, possibly idle since) it starts the stream over with a reconnect
// reset, so routers never keep an idle restarted engine's old blocks.
//
// # JetStream
//
// Optionally a JetStream stream (EnsureStream; created by a relay or a
// router) retains the event subjects for a bounded age. Relays keep
// publishing with core NATS and the server stores what matches. A starting
// Subscriber with ReplayStream first subscribes live (holding messages in its
// queue), then applies the stream's retained messages through the same
// sequence checks, then closes Ready and drains the queue: messages already
// replayed are dropped as duplicates by sequence, so nothing is applied twice
// and nothing is missed between the two.
//
// # Shared predictions
//
// Predictions shares router replicas' speculative predictions (api
// PredictionSubject, PredictionMessage): each replica publishes its
// committed decisions' predictions and applies every other replica's with
// index.SpeculateRemote, keeping the decider's absolute expiry capped at its
// own now plus MaxTTL. Its own messages are recognised by replica id and
// skipped. With a Stream (EnsurePredictionStream, memory storage, age limit
// the maximum stale window) a starting replica replays the predictions still
// live; applying one twice is harmless.
//
// # Concurrency
//
// DecodeBatch is a pure function; a Batch is owned by one goroutine and its
// slices are reused by the next decode into it. A Relay runs three goroutines
// under Run (engine receive loop, NATS publish loop, heartbeat loop) that
// share only the bounded outbox and atomics; Run waits for all of them. A
// Subscriber's NATS handlers never block: they enqueue into a bounded channel
// (overflow counted) drained by the single apply goroutine of Run, which is
// the only caller of the Sink and Membership; the start-up replay runs on
// that goroutine too, before the live loop. Freshness, EndpointFreshness,
// Sources and Ready may be called from any goroutine. IndexSink is safe for
// concurrent use; Discovery is not and relies on that single caller.
// Predictions.Run owns two goroutines, a publish loop and an apply loop
// (which replays first); Predicted never blocks (a bounded queue, drops
// counted) and its NATS handler only enqueues.
//
// # Ownership
//
// The caller owns the *nats.Conn passed to NewRelay and NewSubscriber and
// closes it after Run returns. A Relay owns its ZMQ sockets and the
// Subscriber owns its NATS subscriptions; both release them before Run
// returns. Batches passed to Sink.ApplyBatch are borrowed for the duration of
// the call. EmbeddedServer owns the in-process NATS server until Close. An
// IndexSink writes to the *index.Index it was given and owns nothing; the
// caller keeps the index. The ordered consumer of a replay belongs to Run
// and is stopped before the live loop starts. Predictions borrows the
// *nats.Conn and the *index.Index it is given; Predicted keeps the
// prediction's Keys slice until it is published, so the caller must not
// modify it.
package events
