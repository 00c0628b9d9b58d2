package index

import (
	"encoding/binary"
	"fmt"

	"unsafe"

	"github.com/zeebo/xxh3"
)

// Key identifies one full block of tokens together with everything before it:
// the block's tokens, its parent's key and, through the chain's root, the model
// or LoRA adapter and the cache salt. Two requests share a key only when they
// share the whole prefix up to and including that block under the same identity.
type Key uint64

// Identity is what, besides the tokens, decides whether two prefixes are the
// same cached state on an engine. The zero value is a valid identity (no model,
// no adapter, no salt), though callers should always name the model.
type Identity struct {
	// Model is the served model name. It seeds the chain when LoRA is empty.
	Model string
	// LoRA names the adapter. When set it seeds the chain instead of Model,
	// because engines tag a block with the adapter it was computed under.
	LoRA string
	// CacheSalt isolates tenants: vLLM mixes it into the first block only,
	// which, through chaining, changes every later block too. Mirroring that,
	// the salt is folded into the chain's root.
	CacheSalt string
}

// Token is any integer type a tokenizer or an event decoder may hold token ids
// in. Ids must fit in 32 bits, as every real vocabulary does.
type Token interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~uint
}

// maxBlockSize bounds the block size so the per-block buffer lives on the stack.
const maxBlockSize = 1024

// Root returns the key a sequence's first block chains from. Domain bytes keep
// a model name from colliding with an adapter of the same name and keep a salt
// from colliding with its absence.
func (id Identity) Root() Key {
	name, domain := id.Model, "model\x00"
	if id.LoRA != "" {
		name, domain = id.LoRA, "lora\x00"
	}
	h := xxh3.HashStringSeed(name, xxh3.HashString(domain))
	if id.CacheSalt != "" {
		h = xxh3.HashStringSeed(id.CacheSalt, h)
	}
	return Key(h)
}

// AppendKeys appends to dst the keys of every full block of tokens under id and
// returns the extended slice. The trailing partial block is never keyed: an
// engine only caches, and only announces, full blocks. The same function keys a
// request's prompt and a BlockStored event's tokens, which is what makes the two
// comparable.
func AppendKeys[T Token](dst []Key, id Identity, blockSize int, tokens []T) ([]Key, error) {
	return AppendChain(dst, id.Root(), blockSize, tokens)
}

// AppendChain is AppendKeys continuing an existing chain: parent is the key of
// the block before tokens[0] (or an Identity's Root for a sequence's start).
func AppendChain[T Token](dst []Key, parent Key, blockSize int, tokens []T) ([]Key, error) {
	if blockSize < 1 || blockSize > maxBlockSize {
		return dst, fmt.Errorf("keying %d tokens: block size %d: %w", len(tokens), blockSize, ErrBlockSize)
	}
	n := len(tokens) / blockSize
	dst = growKeys(dst, n)
	if blockSize == 16 {
		if out, bad, ok := appendChain16(dst, parent, tokens); ok {
			if bad >= 0 {
				return out, fmt.Errorf("keying block %d: %w", bad, ErrTokenRange)
			}
			return out, nil
		}
	}
	var buf [8 + 4*maxBlockSize]byte
	b := buf[:8+4*blockSize]
	for i := range n {
		if !putBlock(b[8:], tokens[i*blockSize:(i+1)*blockSize]) {
			return dst, fmt.Errorf("keying block %d: %w", i, ErrTokenRange)
		}
		parent = chain(b, parent)
		dst = append(dst, parent)
	}
	return dst, nil
}

// putBlock writes toks into b as little-endian uint32 and reports whether every
// id fit. The common token types get non-generic loops, which the compiler
// turns into plain stores (a memmove for []uint32); a generic loop costs
// several times as much (BenchmarkAppendKeys).
func putBlock[T Token](b []byte, toks []T) bool {
	switch t := any(toks).(type) {
	case []uint32:
		putUint32s(b, t)
		return true
	case []int:
		return putInts(b, t)
	case []int32:
		return putInt32s(b, t)
	}
	return putAny(b, toks)
}

func putUint32s(b []byte, toks []uint32) {
	if nativeLittleEndian {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(toks))), 4*len(toks)))
		return
	}
	for j, t := range toks {
		binary.LittleEndian.PutUint32(b[4*j:], t)
	}
}

// putInts checks the range once per block (by OR-ing the high bits) rather
// than branching per token.
func putInts(b []byte, toks []int) bool {
	b = b[:4*len(toks)]
	var high uint64
	for j, t := range toks {
		high |= uint64(t) >> 32
		binary.LittleEndian.PutUint32(b[4*j:], uint32(t))
	}
	return high == 0
}

func putInt32s(b []byte, toks []int32) bool {
	b = b[:4*len(toks)]
	var sign int32
	for j, t := range toks {
		sign |= t
		binary.LittleEndian.PutUint32(b[4*j:], uint32(t))
	}
	return sign >= 0
}

func putAny[T Token](b []byte, toks []T) bool {
	b = b[:4*len(toks)]
	var high uint64
	for j, t := range toks {
		high |= uint64(t) >> 32
		binary.LittleEndian.PutUint32(b[4*j:], uint32(t))
	}
	return high == 0
}

var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// chain hashes one block: the parent key followed by the block's tokens as
// little-endian uint32. xxh3 (github.com/zeebo/xxh3) is used rather than
// xxhash64 because for the 72-byte input of a 16-token block it is about twice
// as fast in BenchmarkHashChoice, and it stays ahead for 64-token blocks; the
// 64-bit output is what every peer index keys on.
func chain(b []byte, parent Key) Key {
	binary.LittleEndian.PutUint64(b, uint64(parent))
	return Key(xxh3.Hash(b))
}

func growKeys(dst []Key, n int) []Key {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	out := make([]Key, len(dst), len(dst)+n)
	copy(out, dst)
	return out
}
