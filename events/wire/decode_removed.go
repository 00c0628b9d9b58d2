package wire

import "encoding/binary"

// removedHead is what follows the map header of every one-hash BlockRemoved
// decodeRemovedFast takes: the type and the block_hashes key with its
// one-element array header.
const removedHead = "\xa4type\xacBlockRemoved\xacblock_hashes\x91"

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
//
// With FoldRemovals it also makes the batch foldable, keeping the event as
// the template foldRemoved compares the next ones with when its hash took
// the uint64 form.
func decodeRemovedFast(r *reader, b *Batch, ev *Event) bool {
	at := r.off
	rm, end := matchRemoved(r.b, at)
	if end == 0 {
		return false
	}
	r.off = end
	start := len(b.hashes)
	b.hashes = append(b.hashes, rm.hash)
	ev.Kind, ev.BlockHashes, ev.Medium, ev.GroupIdx = KindBlockRemoved, b.hashes[start:len(b.hashes):len(b.hashes)], rm.medium, rm.group
	if b.FoldRemovals {
		b.foldable, b.foldAt, b.foldLen = true, at, 0
		if r.b[at+removedHashAt] == mpUint64 { // matched, so a whole uint64
			b.foldLen = end - at
		}
	}
	return true
}

// foldRemoved appends the one-hash BlockRemoved at r to the batch's last
// event, which decodeRemovedFast read (b.foldable), when the layout, medium
// and group match, and reports whether it did; otherwise it consumes and
// changes nothing. The last event's hashes end the arena, so the new hash
// extends them in place.
func foldRemoved(r *reader, b *Batch) bool {
	if n := b.foldLen; n != 0 && sameRemoved(r.b, r.off, b.foldAt, n) {
		// The bytes of the event that began the run but for its hash, so
		// matchRemoved would read the same medium and group from them.
		return foldHash(r, b, binary.BigEndian.Uint64(r.b[r.off+removedHashAt+1:]), r.off+n)
	}
	rm, end := matchRemoved(r.b, r.off)
	last := &b.Events[len(b.Events)-1]
	if end == 0 || rm.medium != last.Medium || rm.group != last.GroupIdx {
		return false
	}
	return foldHash(r, b, rm.hash, end)
}

// foldHash appends hash to the batch's last event, which it folds into,
// and moves r to end, the folded event's end.
func foldHash(r *reader, b *Batch, hash uint64, end int) bool {
	r.off = end
	b.hashes = append(b.hashes, hash)
	n := len(b.hashes)
	last := &b.Events[len(b.Events)-1]
	last.BlockHashes = b.hashes[n-len(last.BlockHashes)-1 : n : n]
	last.Folded++
	return true
}

// Where, in a one-hash BlockRemoved in vLLM's layout whose hash takes
// msgpack's uint64 form, that form's first byte is and what follows the
// hash (the medium and group) begins.
const (
	removedHashAt = 1 + len(removedHead)
	removedTailAt = removedHashAt + 9
)

// sameRemoved reports whether the n bytes at p[off:] equal those of the
// one-hash BlockRemoved at p[tmpl:] (n long, its hash in the uint64 form)
// except for the hash's eight bytes. It compares a word at a time: the
// header, removedHead and the hash's form byte in five words (the last two
// overlap), the rest in words from the hash's end, the last of them ending
// at n (the medium's key and value alone are eight bytes, so it never
// reaches back into the hash). vLLM sends one such event per evicted block,
// and this replaces matchRemoved's reading of each (51.9k instructions a
// BenchmarkIngest/vllm message with matchRemoved, 50.6k with this).
func sameRemoved(p []byte, off, tmpl, n int) bool {
	if off < 0 || len(p)-off < n || n < removedTailAt+8 {
		return false
	}
	a, t := p[off:off+n], p[tmpl:tmpl+n]
	w := func(s []byte, i int) uint64 { return binary.LittleEndian.Uint64(s[i:]) }
	if w(a, 0) != w(t, 0) || w(a, 8) != w(t, 8) || w(a, 16) != w(t, 16) || w(a, 24) != w(t, 24) ||
		w(a, removedHashAt-7) != w(t, removedHashAt-7) {
		return false
	}
	for i := removedTailAt; i < n-8; i += 8 {
		if w(a, i) != w(t, i) {
			return false
		}
	}
	return w(a, n-8) == w(t, n-8)
}

// removedEvent is what a one-hash BlockRemoved in vLLM's layout carries.
type removedEvent struct {
	hash   uint64
	medium string
	group  int
}

// Keys of the BlockRemoved fields after block_hashes, as vLLM writes them.
const (
	removedMediumKey = "\xa6medium"
	removedGroupKey  = "\xa9group_idx"
)

// matchRemoved reads the one-hash BlockRemoved map at p[off:] in vLLM's
// layout (see decodeRemovedFast) and returns it with where it ends; end is
// 0 for any other bytes (a map that matches ends well past 0).
func matchRemoved(p []byte, off int) (rm removedEvent, end int) {
	// The shortest such map: its header, removedHead, a one-byte hash, the
	// medium key and a nil.
	const shortest = 1 + len(removedHead) + 1 + len(removedMediumKey) + 1
	if off < 0 || len(p)-off < shortest {
		return removedEvent{}, 0
	}
	// The header and removedHead are compared a word at a time: the
	// compiler turns each comparison with an eight-byte literal into one
	// load and compare, where comparing the whole head called memequal
	// and spilled the registers around the call (the chunks spell
	// removedHead; TestRemovedHeadChunks checks that they do).
	q := (*[1 + len(removedHead)]byte)(p[off : off+1+len(removedHead)])
	if c := q[0]; c != 0x83 && c != 0x84 {
		return removedEvent{}, 0
	}
	if string(q[1:9]) != "\xa4type\xacBl" || string(q[9:17]) != "ockRemov" ||
		string(q[17:25]) != "ed\xacblock" || string(q[25:33]) != "_hashes\x91" {
		return removedEvent{}, 0
	}
	off += len(q)
	if p[off] == mpUint64 && len(p)-off >= 9+len(removedMediumKey)+1 {
		// vLLM's hashes are 64-bit, so nearly all take the widest form.
		rm.hash, off = binary.BigEndian.Uint64(p[off+1:off+9]), off+9
	} else {
		var n int
		if rm.hash, n = uintAt(p, off); n == 0 {
			return removedEvent{}, 0
		}
		off += n
	}
	return rm, rm.readTail(p, off, q[0] == 0x84)
}

// readTail reads the medium and, when withGroup, the group that follow the
// hash at p[off:] into rm, and returns where they end; 0 when the bytes
// are not that layout.
func (rm *removedEvent) readTail(p []byte, off int, withGroup bool) int {
	if len(p)-off < len(removedMediumKey)+1 || string(p[off:off+len(removedMediumKey)]) != removedMediumKey {
		return 0
	}
	off += len(removedMediumKey)
	switch c := p[off]; {
	case c == mpNil:
		off++
	case c>>5 == 0xa0>>5:
		e := off + 1 + int(c&0x1f)
		if e > len(p) {
			return 0
		}
		rm.medium, off = internMedium(p[off+1:e]), e
	default:
		return 0
	}
	if !withGroup {
		return off
	}
	// Two literal comparisons, as for the head: one of all ten bytes calls
	// memequal.
	if len(p)-off < len(removedGroupKey)+1 || string(p[off:off+8]) != "\xa9group_i" || string(p[off+8:off+10]) != "dx" {
		return 0
	}
	off += len(removedGroupKey)
	if p[off] > 0x7f {
		return 0
	}
	rm.group = int(p[off])
	return off + 1
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
