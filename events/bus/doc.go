// Package bus is how warmroute reaches NATS: client options for an external
// server or cluster (credentials, NKey, TLS), a real NATS server embedded in
// the process for single-machine deployments, the JetStream stream that
// retains event batches (EnsureStream) and the one replay loop behind every
// start-up replay (Replay). Config is the router's connection settings (the
// inline part of serve's `events:` section) and Client opens them: an
// embedded server when no URL is set, then the connection.
//
// The embedded server takes its authorization and TLS from a nats-server
// configuration file and refuses a non-loopback address without
// authentication unless told it is insecure. A Monitor follows a
// connection's state for metrics, logs and readiness, with reasons from a
// closed set (Reason).
//
// Relays keep publishing with core NATS; a JetStream stream only stores what
// reaches its subjects, so the live path keeps core latency and the relay's
// own bounded buffer stays the one place where messages wait for NATS.
//
// # Concurrency
//
// ConnectOptions and Config are values. A Client's methods, an
// EmbeddedServer's and a Monitor's are safe for concurrent use; Close is
// idempotent. A Monitor's callbacks run on nats.go's callback goroutine and
// never block.
//
// # Ownership
//
// A Client owns its connection, its embedded server and the temporary
// JetStream store it created, and releases them in Close; close the
// connection's users (subscriber, prediction share) first. EmbeddedServer
// owns the in-process server until Close. The caller of Connect owns the
// returned *nats.Conn. Monitor.Start starts a goroutine that Monitor.Close
// stops and waits for.
package bus
