// Package router assembles `warmroute serve` from its configuration: the
// ext_proc gRPC server (package extproc) over the decision pipeline (scorer,
// tokenizer, index), the speculative TTL controller (index/ttl), KV event
// ingestion and prediction sharing over NATS (events/...), the admin HTTP
// server with metrics and health, and the debug HTTP server (index lookups,
// the TTL report, optional pprof), which listens apart, on loopback by
// default, because an index lookup tells its caller whether a prompt is
// cached.
//
// Config is the schema of the configuration file. It owns no setting beyond
// the listeners: it composes the Config of each package that has one
// (scorer, extproc, index, index/ttl, events/subscriber), so every setting
// has one owner, one default and one validation. The command loads a file
// into a Config (Load) and binds each flag straight into the same field.
//
// # Ownership
//
// New builds every part in dependency order (NATS, the event subscriber, the
// TTL controller reading the subscriber's freshness, the pipeline, the
// servers), so no part is linked to another after construction. Run owns
// every goroutine it starts and returns once they have stopped.
package router
