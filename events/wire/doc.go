// Package wire decodes the KV event batches inference engines publish:
// vLLM's EventBatch (array or map form, every version's field layout) and
// SGLang's, both msgpack, into a reusable Batch of Events. It is the leaf of
// the event path: the relay decodes to check what it forwards, the router
// side to apply it, and neither NATS nor the index is known here.
//
// Unknown event tags are skipped and counted in Batch.Skipped; a payload that
// is not a well-formed batch fails with ErrMalformed (ErrTooDeep for nesting
// beyond what a skipped value may have), never with a panic, whatever the
// input (FuzzDecodeBatch).
//
// # Concurrency
//
// DecodeBatch is a pure function and safe for concurrent use. A Batch is
// owned by one goroutine at a time.
//
// # Ownership
//
// A Batch's slices are reused by the next decode into it: copy what must
// outlive that. Strings (medium, LoRA names) are interned or copied, never
// aliased to the payload.
package wire
