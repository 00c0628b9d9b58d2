// Package events holds no code: it is the home of warmroute's KV event path,
// split into packages that follow the data flow.
//
//	engine --ZMQ--> relay --NATS--> subscriber --> index (and pool membership)
//	router <--NATS--> predictions <--NATS--> other routers
//
// The packages, in that order:
//
//   - wire decodes the engines' wire formats (vLLM and SGLang msgpack
//     batches); the relay and the router side both use it.
//   - bus reaches NATS: connection options, the embedded server, the
//     JetStream streams and their replay, and the router's Config.
//   - relay forwards one engine's ZMQ stream to NATS, filling gaps from the
//     engine's replay socket and announcing explicit resets when it cannot.
//   - subscriber is the router side: it follows the streams per model,
//     checks sequence continuity per Source, applies batches in order to a
//     Sink (IndexSink writes them to an index.Index), tracks freshness and
//     turns relay heartbeats into routable endpoints (Discovery).
//   - predictions shares router replicas' speculative predictions.
//   - eventstest has in-memory doubles and the NATS helpers their tests share.
//
// Nothing is lost silently: every gap, reset, malformed payload, overflow and
// expiry is counted and, when it makes a Source's state unknown, clears that
// Source in the Sink. The subjects, headers, heartbeat and prediction
// schemas are in package api.
package events
