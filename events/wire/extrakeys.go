package wire

// vLLM publishes, per block, the extra keys it mixed into the block's hash as
// one untagged tuple: the LoRA name when the request used an adapter, then a
// (mm_identifier, offset) pair for every multimodal input overlapping the
// block, then the request's cache_salt (first block of a request only), then
// a prompt-embeddings digest (bin) when the request sent embeddings. The
// methods below read that shape lazily: most events carry no extra keys, and
// the decoder keeps them raw.

// Salt returns the cache salt the event's blocks were computed under:
// SGLang's top-level cache_salt, else, for an event starting a request's
// chain (no parent), the string in vLLM's first extra-keys entry that is not
// the LoRA name. "" when unsalted.
func (ev *Event) Salt() string {
	if ev.CacheSalt != "" || ev.HasParent || len(ev.ExtraKeys) == 0 {
		return ev.CacheSalt
	}
	salt, _ := scanExtraKey(ev.ExtraKeys[0], ev.LoRAName)
	return salt
}

// Opaque reports whether block i's extra keys hold an identity a router
// cannot compute from a request's text: a multimodal input hash, a prompt
// embeddings digest, or any value of a shape this decoder does not know.
// Such a block (and, through chaining, every block after it) must never
// match a text prompt.
func (ev *Event) Opaque(i int) bool {
	if i < 0 || i >= len(ev.ExtraKeys) || ev.ExtraKeys[i] == nil {
		return false
	}
	_, opaque := scanExtraKey(ev.ExtraKeys[i], ev.LoRAName)
	return opaque
}

// scanExtraKey reads one extra-keys entry: its salt candidate (a string
// that is not the leading LoRA name) and whether anything else is in it.
// The entry was checked to be one well-formed msgpack value when decoded,
// so a read error can only mean an unexpected shape: opaque.
func scanExtraKey(raw []byte, lora string) (salt string, opaque bool) {
	r := reader{b: raw}
	if !r.isArray() {
		return "", true
	}
	n, err := r.readArrayLen()
	if err != nil {
		return "", true
	}
	for i := range n {
		if !r.isStr() {
			if r.skip() != nil {
				return salt, true
			}
			opaque = true
			continue
		}
		s, err := r.readStr()
		if err != nil {
			return salt, true
		}
		if i == 0 && lora != "" && string(s) == lora {
			continue
		}
		salt = string(s)
	}
	return salt, opaque
}

// isStr reports whether the next value is a msgpack string.
func (r *reader) isStr() bool {
	c, err := r.peek()
	return err == nil && (c&0xe0 == 0xa0 || c == mpStr8 || c == mpStr16 || c == mpStr32)
}

// ScanExtraKey reads one raw extra-keys entry as Event.Salt and
// Event.Opaque do: salt is the string in it that is not the leading LoRA
// name lora (vLLM writes the request's cache salt into the first block's
// entry only, so it names a salt only for a block starting a chain), and
// opaque reports anything a router cannot compute from a request (a
// multimodal hash, an embeddings digest, an unknown shape). For entries kept
// raw, as a relay's snapshot carries them.
func ScanExtraKey(raw []byte, lora string) (salt string, opaque bool) {
	if raw == nil {
		return "", false
	}
	return scanExtraKey(raw, lora)
}

// SaltExtraKey returns the extra-keys entry vLLM writes for a request's
// first block when the request has a cache salt and no media: the adapter
// name when lora is set, then the salt. A relay gives a root block of
// SGLang's (whose salt comes as the event's cache_salt) this entry in its
// snapshot, so a router rebuilding from it keys the block under its salt.
func SaltExtraKey(lora, salt string) []byte {
	if lora == "" {
		return appendMsgpackStr([]byte{0x91}, salt) // fixarray of 1
	}
	return appendMsgpackStr(appendMsgpackStr([]byte{0x92}, lora), salt)
}

func appendMsgpackStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 1<<8:
		b = append(b, mpStr8, byte(n))
	case n < 1<<16:
		b = append(b, mpStr16, byte(n>>8), byte(n))
	default:
		b = append(b, mpStr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

// FullAttention reports whether a KV cache group of kv_cache_spec_kind kind
// holds full-attention blocks, the only ones a router keys. vLLM's hybrid
// models (sliding window or Mamba layers beside full attention) publish one
// BlockStored per group; a sparse group skips its null and unreachable
// blocks in block_hashes but not in token_ids, so its hashes cannot be
// paired with token blocks, and they repeat the full-attention group's
// hashes for the same blocks. Events that name no kind (SGLang's, older
// vLLM's) are full attention.
func FullAttention(kind string) bool {
	switch kind {
	case "", "full_attention", "mla_attention", "sink_full_attention":
		return true
	}
	return false
}
