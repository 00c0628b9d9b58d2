package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// field identifies an event field independently of how it was located (by
// map key or by legacy array position).
type field uint8

const (
	fieldSkip field = iota
	fieldBlockHashes
	fieldParent
	fieldTokens
	fieldBlockSize
	fieldLoRAID
	fieldMedium
	fieldLoRAName
	fieldExtraKeys
	fieldGroupIdx
	fieldSpecKind
	fieldSlidingWindow
	fieldLocality
	fieldOwnership
	fieldSessionID
	fieldCacheSalt
	fieldLookahead
)

// positional lists each kind's fields in declaration order, which is the
// legacy array layout after the tag.
var positional = [...][]field{
	KindBlockStored: {fieldBlockHashes, fieldParent, fieldTokens, fieldBlockSize,
		fieldLoRAID, fieldMedium, fieldLoRAName, fieldExtraKeys, fieldGroupIdx,
		fieldSpecKind, fieldSlidingWindow, fieldLocality, fieldOwnership, fieldSessionID, fieldLookahead},
	KindBlockRemoved:     {fieldBlockHashes, fieldMedium, fieldGroupIdx, fieldLocality, fieldOwnership},
	KindAllBlocksCleared: nil,
	KindUnknown:          nil,
}

func fieldByName(key []byte) field {
	switch string(key) {
	case "block_hashes":
		return fieldBlockHashes
	case "parent_block_hash":
		return fieldParent
	case "token_ids":
		return fieldTokens
	case "block_size":
		return fieldBlockSize
	case "lora_id":
		return fieldLoRAID
	case "medium":
		return fieldMedium
	case "lora_name":
		return fieldLoRAName
	case "extra_keys":
		return fieldExtraKeys
	case "group_idx":
		return fieldGroupIdx
	case "kv_cache_spec_kind":
		return fieldSpecKind
	case "kv_cache_spec_sliding_window":
		return fieldSlidingWindow
	case "locality":
		return fieldLocality
	case "ownership":
		return fieldOwnership
	case "session_id":
		return fieldSessionID
	case "cache_salt":
		return fieldCacheSalt
	case "lookahead_token_ids":
		return fieldLookahead
	}
	return fieldSkip
}

var fieldNames = [...]string{"", "block_hashes", "parent_block_hash", "token_ids",
	"block_size", "lora_id", "medium", "lora_name", "extra_keys", "group_idx",
	"kv_cache_spec_kind", "kv_cache_spec_sliding_window", "locality", "ownership", "session_id",
	"cache_salt", "lookahead_token_ids"}

// decodeField decodes one field value into ev. Every optional field accepts nil.
func decodeField(r *reader, b *Batch, ev *Event, f field) error {
	if f == fieldSkip {
		return r.skip()
	}
	if err := decodeFieldValue(r, b, ev, f); err != nil {
		return fmt.Errorf("%s: %w", fieldNames[f], err)
	}
	return nil
}

func decodeFieldValue(r *reader, b *Batch, ev *Event, f field) error {
	if r.readNil() {
		return nil
	}
	var err error
	switch f {
	case fieldBlockHashes:
		ev.BlockHashes, err = decodeHashes(r, b)
	case fieldParent:
		ev.ParentHash, err = readHash(r)
		ev.HasParent = err == nil
	case fieldTokens:
		ev.TokenIDs, ev.Bigram, err = decodeTokens(r, b)
	case fieldLookahead:
		ev.Lookahead, err = decodeLookahead(r, b)
	case fieldBlockSize:
		ev.BlockSize, err = readSmallInt(r)
	case fieldLoRAID:
		ev.LoRAID, err = r.readInt()
	case fieldExtraKeys:
		ev.ExtraKeys, err = decodeExtraKeys(r, b)
	case fieldGroupIdx:
		ev.GroupIdx, err = readSmallInt(r)
	case fieldSlidingWindow:
		ev.SlidingWindow, err = readSmallInt(r)
	default:
		err = decodeStringField(r, ev, f)
	}
	return err
}

func decodeStringField(r *reader, ev *Event, f field) error {
	s, err := r.readStr()
	if err != nil {
		return err
	}
	switch f {
	case fieldMedium:
		ev.Medium = internMedium(s)
	case fieldLoRAName:
		ev.LoRAName = string(s)
	case fieldSpecKind:
		ev.SpecKind = internSpecKind(s)
	case fieldLocality:
		ev.Locality = string(s)
	case fieldOwnership:
		ev.Ownership = string(s)
	case fieldSessionID:
		ev.SessionID = string(s)
	case fieldCacheSalt:
		ev.CacheSalt = string(s)
	}
	return nil
}

// internMedium and internSpecKind return constants for the common values so
// the hot path does not allocate a string per event.
func internMedium(s []byte) string {
	switch string(s) {
	case "GPU":
		return "GPU"
	case "CPU":
		return "CPU"
	case "STORAGE":
		return "STORAGE"
	case "CPU_PINNED":
		return "CPU_PINNED"
	case "DISK":
		return "DISK"
	}
	return string(s)
}

func internSpecKind(s []byte) string {
	if string(s) == "full_attention" {
		return "full_attention"
	}
	return string(s)
}

// readSmallInt reads a non-negative int that fits comfortably in an int.
func readSmallInt(r *reader) (int, error) {
	v, err := r.readInt()
	if err != nil {
		return 0, err
	}
	if v < 0 || v > math.MaxInt32 {
		return 0, fmt.Errorf("value %d out of range: %w", v, ErrMalformed)
	}
	return int(v), nil
}

// readHash normalises an engine block hash: uint64 as is, a signed integer by
// its two's complement pattern, bin as its last 8 bytes big-endian.
func readHash(r *reader) (uint64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if c >= mpBin8 && c <= mpBin32 {
		bin, err := r.readBin()
		if err != nil {
			return 0, err
		}
		var h uint64
		for _, x := range bin[max(0, len(bin)-8):] {
			h = h<<8 | uint64(x)
		}
		return h, nil
	}
	u, _, err := r.readInteger()
	return u, err
}

func decodeHashes(r *reader, b *Batch) ([]uint64, error) {
	n, err := r.readArrayLen()
	if err != nil {
		return nil, err
	}
	start := len(b.hashes)
	b.hashes = slices.Grow(b.hashes, n)
	i := readHashesFast(r, b, n)
	for ; i < n; i++ {
		h, err := readHash(r)
		if err != nil {
			return nil, fmt.Errorf("hash %d: %w", i, err)
		}
		b.hashes = append(b.hashes, h)
	}
	return b.hashes[start:len(b.hashes):len(b.hashes)], nil
}

// decodeTokens reads token ids with a fast path for the integer encodings
// msgpack writers use for non-negative values below 2^32. SGLang with EAGLE
// speculative decoding sends each position as a bigram pair [t_j, t_j+1]:
// the block's own token is the pair's first element (the second is the next
// position's token, which the pair after it repeats), so a bigram list
// decodes to the same ids as the plain one and bigram reports it.
func decodeTokens(r *reader, b *Batch) (ids []uint32, bigram bool, err error) {
	n, err := r.readArrayLen()
	if err != nil {
		return nil, false, err
	}
	start := len(b.tokens)
	b.tokens = slices.Grow(b.tokens, n)
	i := readTokensFast(r, b, n)
	for ; i < n; i++ {
		var t uint32
		if r.isArray() {
			t, err = readBigram(r)
			bigram = true
		} else {
			t, err = readToken(r)
		}
		if err != nil {
			return nil, false, fmt.Errorf("token %d: %w", i, err)
		}
		b.tokens = append(b.tokens, t)
	}
	return b.tokens[start:len(b.tokens):len(b.tokens)], bigram, nil
}

// readBigram reads one [token, next token] pair and returns the first.
func readBigram(r *reader) (uint32, error) {
	n, err := r.readArrayLen()
	if err != nil {
		return 0, err
	}
	if n != 2 {
		return 0, r.errorf("bigram has %d elements, want 2", n)
	}
	t, err := readToken(r)
	if err != nil {
		return 0, err
	}
	if _, err := readToken(r); err != nil {
		return 0, err
	}
	return t, nil
}

// decodeLookahead reads vLLM's lookahead_token_ids: one list per block of
// the tokens after the block that its hash also covers. Each list borrows
// from the token arena.
func decodeLookahead(r *reader, b *Batch) ([][]uint32, error) {
	n, err := r.readArrayLen()
	if err != nil {
		return nil, err
	}
	start := len(b.lookahead)
	for i := range n {
		var ids []uint32
		if !r.readNil() {
			if ids, _, err = decodeTokens(r, b); err != nil {
				return nil, fmt.Errorf("block %d: %w", i, err)
			}
		}
		b.lookahead = append(b.lookahead, ids)
	}
	return b.lookahead[start:len(b.lookahead):len(b.lookahead)], nil
}

func readToken(r *reader) (uint32, error) {
	p := r.b[r.off:]
	if len(p) > 0 && p[0] <= 0x7f {
		r.off++
		return uint32(p[0]), nil
	}
	if len(p) >= 3 && p[0] == mpUint16 {
		r.off += 3
		return uint32(p[1])<<8 | uint32(p[2]), nil
	}
	if len(p) >= 5 && p[0] == mpUint32 {
		r.off += 5
		return uint32(p[1])<<24 | uint32(p[2])<<16 | uint32(p[3])<<8 | uint32(p[4]), nil
	}
	v, err := r.readInt()
	if err != nil {
		return 0, err
	}
	if v < 0 || v > math.MaxUint32 {
		return 0, fmt.Errorf("token id %d out of range: %w", v, ErrMalformed)
	}
	return uint32(v), nil
}

func decodeExtraKeys(r *reader, b *Batch) ([][]byte, error) {
	n, err := r.readArrayLen()
	if err != nil {
		return nil, err
	}
	start := len(b.extras)
	for i := range n {
		var v []byte
		if !r.readNil() {
			if v, err = r.raw(); err != nil {
				return nil, fmt.Errorf("entry %d: %w", i, err)
			}
		}
		b.extras = append(b.extras, v)
	}
	return b.extras[start:len(b.extras):len(b.extras)], nil
}

// readTokensFast appends, of the n token ids that follow, the longest prefix
// in the encodings msgpack writers use for ids below 2^32 (positive fixint,
// uint8, uint16, uint32) and returns how many it read; decodeTokens reads the
// rest (bigram pairs, other integer encodings, errors) one by one. It is the
// per-token loop of a message's whole payload, so it keeps the cursor in a
// local and reads each id with one bounds check rather than through
// readToken's calls; what it accepts decodes exactly as readToken would.
func readTokensFast(r *reader, b *Batch, n int) int {
	p, off := r.b, r.off
	start := len(b.tokens)
	// decodeTokens has grown the arena by n, so ids are written by index.
	dst := b.tokens[start : start+n]
	i := 0
	// While five bytes remain (the longest encoding), each id is read from
	// the five bytes at off through a pointer to them: the loop's condition
	// keeps off within len(p)-5, which the compiler cannot carry across
	// iterations, so slicing p[off:off+5] cost each id two compares and
	// branches of bounds checks (about 22 instructions an id with them).
	// FuzzFastTokensHashes compares the loop with readToken; with -race,
	// checkptr checks every pointer it forms stays within p.
	at := unsafe.Pointer(unsafe.SliceData(p))
	for ; i < len(dst) && off <= len(p)-5; i++ {
		q := (*[5]byte)(unsafe.Add(at, off))
		var t uint32
		switch c := q[0]; {
		case c <= 0x7f:
			t = uint32(c)
			off++
		case c == mpUint16:
			t = uint32(q[1])<<8 | uint32(q[2])
			off += 3
		case c == mpUint32:
			t = uint32(q[1])<<24 | uint32(q[2])<<16 | uint32(q[3])<<8 | uint32(q[4])
			off += 5
		case c == mpUint8:
			t = uint32(q[1])
			off += 2
		default:
			r.off, b.tokens = off, b.tokens[:start+i]
			return i
		}
		dst[i] = t
	}
	// The last few bytes, each encoding checked against the end.
	for ; i < len(dst) && off < len(p); i++ {
		var t uint32
		switch c := p[off]; {
		case c <= 0x7f:
			t = uint32(c)
			off++
		case c == mpUint8 && off+1 < len(p):
			t = uint32(p[off+1])
			off += 2
		case c == mpUint16 && off+2 < len(p):
			t = uint32(binary.BigEndian.Uint16(p[off+1:]))
			off += 3
		case c == mpUint32 && off+4 < len(p):
			t = binary.BigEndian.Uint32(p[off+1:])
			off += 5
		default:
			r.off, b.tokens = off, b.tokens[:start+i]
			return i
		}
		dst[i] = t
	}
	r.off, b.tokens = off, b.tokens[:start+i]
	return i
}

// readHashesFast is readTokensFast for block hashes: it appends the longest
// prefix of the n hashes that follow written as unsigned integers (what
// vLLM's uint64 hashes are) and returns how many it read; decodeHashes reads
// the rest with readHash (signed integers, bin hashes, errors).
func readHashesFast(r *reader, b *Batch, n int) int {
	p, off := r.b, r.off
	out := b.hashes
	i := 0
	for ; i < n && off < len(p); i++ {
		var h uint64
		switch c := p[off]; {
		case c == mpUint64 && off+8 < len(p):
			h = binary.BigEndian.Uint64(p[off+1:])
			off += 9
		case c <= 0x7f:
			h = uint64(c)
			off++
		case c == mpUint32 && off+4 < len(p):
			h = uint64(binary.BigEndian.Uint32(p[off+1:]))
			off += 5
		default:
			r.off, b.hashes = off, out
			return i
		}
		out = append(out, h)
	}
	r.off, b.hashes = off, out
	return i
}
