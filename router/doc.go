// Package router assembles `warmroute serve` from its configuration: the
// ext_proc gRPC server (package extproc) over the decision pipeline (scorer,
// tokenizer, index), the speculative TTL controller (index/ttl), KV event
// ingestion and prediction sharing over NATS (events/...), and the admin HTTP
// server with metrics, health and debug endpoints.
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
