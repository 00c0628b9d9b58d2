// Package inferencepool keeps a router pool's endpoints in step with a
// Gateway API Inference Extension InferencePool
// (inference.networking.k8s.io/v1): its members are the ready, not
// terminating Pods of its namespace that its selector picks, each on the
// pool's target port, as GIE's own endpoint picker defines them.
//
// # Concurrency
//
// A Watcher is built with New and run with Run; Run owns the informers and
// one loop that recomputes the membership after any change and hands it to
// the Sink, so the Sink is only ever called from that loop, one call at a
// time. Synced may be read from any goroutine.
//
// # Ownership
//
// Run starts the informers' goroutines and returns after they have stopped,
// once its context ends.
package inferencepool
