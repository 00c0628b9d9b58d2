// Package relay forwards one engine's KV event stream from ZMQ to NATS: it
// checks the engine's sequence numbers, fills gaps from the engine's replay
// socket, announces explicit resets when it cannot, buffers (bounded,
// counted) while NATS is away, and publishes heartbeats that carry the
// engine's connection state and, when scraped, its load.
//
// # Start-up
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
// With Config.Stream named, the relay also creates the JetStream stream
// (bus.EnsureStream) so batches are retained even before any router has.
//
// # Concurrency
//
// A Relay runs three goroutines under Run (engine receive loop, NATS publish
// loop, heartbeat loop; a fourth ensures the stream when configured) that
// share only the bounded outbox and atomics; Run waits for all of them.
// Its methods are safe for concurrent use.
//
// # Ownership
//
// The caller owns the *nats.Conn passed to New and closes it after Run
// returns. A Relay owns its ZMQ sockets and releases them before Run
// returns.
package relay
