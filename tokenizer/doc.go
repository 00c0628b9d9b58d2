// Package tokenizer turns prompt text into the token ids a model server would
// compute, in pure Go, from the same Hugging Face tokenizer.json the engine loads.
//
// It implements the subset of the Hugging Face tokenizers pipeline that the
// supported model families use (added-token extraction, normalizers,
// pre-tokenizer splits with hand-written scanners for the families' regexes,
// byte-level and SentencePiece-style BPE with byte fallback, post-processors
// and decoders). Anything outside that subset is rejected when the file is
// loaded, never approximated: a tokenizer that differs from the engine's by one
// token turns every later KV block into a cache miss.
//
// It also renders chat templates (Jinja, as transformers does), keeps a prefix
// cache for multi-turn conversations, can ask the engine's POST /tokenize
// instead, and can compare both to detect drift.
//
// # Concurrency
//
// A loaded *Tokenizer is immutable and safe for concurrent use. PrefixCache,
// Remote and Drift are safe for concurrent use; see each type.
//
// # Ownership
//
// Slices returned by Encode and AppendEncode (on a Tokenizer or a
// PrefixCache) belong to the caller; a PrefixCache copies its cached ids
// into them. Tokenizer.Encode never retains the input text; a PrefixCache
// keeps the prefixes it caches, within its byte budget.
package tokenizer
