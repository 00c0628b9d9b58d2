package wire

// decodeRemovedFast reads, when the input at r holds one, a one-hash
// BlockRemoved map in the layout vLLM's encoder writes: {"type":
// "BlockRemoved", "block_hashes": [h], "medium": s or nil[, "group_idx":
// n]}, keys in that order, h an unsigned integer, s a fixstr, n a positive
// fixint. For any other bytes it reports false and consumes and changes
// nothing, and decodeEventMap reads the event. vLLM sends one such event for
// every block its cache evicts, so on a busy engine they are most of a
// message's events: here one comparison of their fixed bytes replaces a key
// lookup and a field dispatch per key. FuzzRemovedFast checks that both
// decoders read any input alike.
func decodeRemovedFast(r *reader, b *Batch, ev *Event) bool {
	const (
		head     = "\xa4type\xacBlockRemoved\xacblock_hashes\x91"
		medium   = "\xa6medium"
		groupIdx = "\xa9group_idx"
	)
	p, off := r.b, r.off
	if off >= len(p) || (p[off] != 0x83 && p[off] != 0x84) {
		return false
	}
	pairs := int(p[off] & 0x0f)
	off++
	if !hasAt(p, off, head) {
		return false
	}
	off += len(head)
	h, n := uintAt(p, off)
	if n == 0 {
		return false
	}
	off += n
	if !hasAt(p, off, medium) {
		return false
	}
	off += len(medium)
	if off >= len(p) {
		return false
	}
	m := ""
	switch c := p[off]; {
	case c == mpNil:
		off++
	case c>>5 == 0xa0>>5:
		end := off + 1 + int(c&0x1f)
		if end > len(p) {
			return false
		}
		m, off = internMedium(p[off+1:end]), end
	default:
		return false
	}
	group := 0
	if pairs == 4 {
		if !hasAt(p, off, groupIdx) {
			return false
		}
		off += len(groupIdx)
		if off >= len(p) || p[off] > 0x7f {
			return false
		}
		group, off = int(p[off]), off+1
	}
	r.off = off
	start := len(b.hashes)
	b.hashes = append(b.hashes, h)
	ev.Kind, ev.BlockHashes, ev.Medium, ev.GroupIdx = KindBlockRemoved, b.hashes[start:len(b.hashes):len(b.hashes)], m, group
	return true
}

// hasAt reports whether p holds s at off.
func hasAt(p []byte, off int, s string) bool {
	return off <= len(p) && len(p)-off >= len(s) && string(p[off:off+len(s)]) == s
}

// uintAt reads the unsigned msgpack integer at p[off] (a positive fixint or
// uint 8/16/32/64) and its length in bytes, which is 0 for anything else or
// an integer cut short.
func uintAt(p []byte, off int) (uint64, int) {
	if off >= len(p) {
		return 0, 0
	}
	c := p[off]
	if c <= 0x7f {
		return uint64(c), 1
	}
	if c < mpUint8 || c > mpUint64 {
		return 0, 0
	}
	w := 1 << (c - mpUint8)
	if len(p)-off-1 < w {
		return 0, 0
	}
	return beUint(p[off+1:], w), 1 + w
}
