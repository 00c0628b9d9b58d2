package index

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Block size 16 is vLLM's default on CUDA and the one almost every request
// is keyed with, so it gets a path of its own: chain16 is xxh3's 64-bit hash
// of exactly the 72 bytes chain would hash (le64(parent) || 16 x le32), taken
// straight from the tokens' 64-bit words. Nothing is copied into a buffer and
// xxh3 needs no length dispatch; TestChain16MatchesXXH3 and FuzzChain16 check
// that the result is bit-identical to chain's, so keys do not depend on which
// path made them.

// xxh3's default secret, the 64-bit words at the byte offsets its 17-128 byte
// path uses (XXH3 specification, kSecret).
const (
	sec000 = 0xbe4ba423396cfeb8
	sec008 = 0x1cad21f72c81017c
	sec016 = 0xdb979083e96dd4de
	sec024 = 0x1f67b3b7a4a44072
	sec032 = 0x78e5c0cc4ee679cb
	sec040 = 0x2172ffcc7dd05a82
	sec048 = 0x8e2443f7744608b8
	sec056 = 0x4c263a81e69035e0
	sec064 = 0xcb00c391bb52283c
	sec072 = 0xa32e531b8b65d088
	sec080 = 0x4ef90da297486471
	sec088 = 0xd8acdea946ef1938

	xxh3Avalanch = 0x165667919e3779f9
	block16Len   = 8 + 4*16
	// lenTimesPrime is xxh3's length seed, 72 * prime1 wrapped to 64 bits
	// (TestChain16MatchesXXH3 would catch a wrong value).
	lenTimesPrime = 0x7f9a39edaa50f5f8
)

func mulFold(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}

// hashBlocks16 keys consecutive 16-token blocks given as their little-endian
// bytes (64 per block), chaining from parent, into out; it returns the last
// key. For a 72-byte input xxh3 mixes the 16-byte pairs at offsets 0, 16, 32
// and their mirrors from the end (56, 40, 24); with the parent at offset 0,
// byte offset 8+8j is the block's word j. The hash is written out in the loop
// rather than called, because the call (past the inliner's budget) costs a
// quarter of a block's time, and the parent's term comes last: the other five
// do not depend on it, so the CPU computes them while the previous block's
// hash is still in flight.
func hashBlocks16(out []Key, parent Key, raw []byte) Key {
	for i := range out {
		b := (*[64]byte)(raw[64*i:])
		w0, w1 := binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])
		w2, w3 := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
		w4, w5 := binary.LittleEndian.Uint64(b[32:]), binary.LittleEndian.Uint64(b[40:])
		w6, w7 := binary.LittleEndian.Uint64(b[48:]), binary.LittleEndian.Uint64(b[56:])
		acc := uint64(lenTimesPrime)
		acc += mulFold(w3^sec064, w4^sec072)
		acc += mulFold(w2^sec080, w3^sec088)
		acc += mulFold(w1^sec032, w2^sec040)
		acc += mulFold(w4^sec048, w5^sec056)
		acc += mulFold(w6^sec016, w7^sec024)
		acc += mulFold(uint64(parent)^sec000, w0^sec008)
		acc ^= acc >> 37
		acc *= xxh3Avalanch
		acc ^= acc >> 32
		parent = Key(acc)
		out[i] = parent
	}
	return parent
}

// appendChain16 keys 16-token blocks of the token types that have a word
// reader; ok is false for other types, which take the generic path. bad is
// the index of the first block with an id beyond 32 bits, or -1.
func appendChain16[T Token](dst []Key, parent Key, tokens []T) (out []Key, bad int, ok bool) {
	switch t := any(tokens).(type) {
	case []uint32:
		out = appendU32x16(dst, parent, t)
		return out, -1, true
	case []int:
		out, bad = appendIntx16(dst, parent, t)
		return out, bad, true
	}
	return dst, -1, false
}

// chunk16 is how many blocks the converting paths stage at a time, in a
// 2 KiB stack buffer.
const chunk16 = 32

// appendU32x16 and appendIntx16 write into dst's spare capacity by index
// rather than append, which keeps the loop free of growth checks.
func appendU32x16(dst []Key, parent Key, toks []uint32) []Key {
	n := len(toks) / 16
	dst = growKeys(dst, n)
	out := dst[len(dst) : len(dst)+n]
	if nativeLittleEndian && n > 0 {
		// The tokens' memory already is the little-endian byte string.
		hashBlocks16(out, parent, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(toks))), 64*n))
		return dst[:len(dst)+n]
	}
	var buf [64 * chunk16]byte
	for done := 0; done < n; done += chunk16 {
		m := min(chunk16, n-done)
		for j, t := range toks[16*done : 16*(done+m)] {
			binary.LittleEndian.PutUint32(buf[4*j:], t)
		}
		parent = hashBlocks16(out[done:done+m], parent, buf[:])
	}
	return dst[:len(dst)+n]
}

// appendIntx16 returns, on a block with an id beyond 32 bits, the keys before
// it and the block's index.
func appendIntx16(dst []Key, parent Key, toks []int) ([]Key, int) {
	n := len(toks) / 16
	dst = growKeys(dst, n)
	out := dst[len(dst) : len(dst)+n]
	var buf [64 * chunk16]byte
	for done := 0; done < n; done += chunk16 {
		m := min(chunk16, n-done)
		for j := range m {
			if !intBytes16((*[16]int)(toks[16*(done+j):]), (*[64]byte)(buf[64*j:])) {
				hashBlocks16(out[done:done+j], parent, buf[:])
				return dst[:len(dst)+done+j], done + j
			}
		}
		parent = hashBlocks16(out[done:done+m], parent, buf[:])
	}
	return dst[:len(dst)+n], -1
}

// intBytes16 writes 16 ids as little-endian uint32 and reports whether all
// fit in 32 bits: OR-ing the ids keeps any high (or sign) bit, so one test
// covers the block.
func intBytes16(t *[16]int, b *[64]byte) bool {
	all := t[0] | t[1] | t[2] | t[3] | t[4] | t[5] | t[6] | t[7] |
		t[8] | t[9] | t[10] | t[11] | t[12] | t[13] | t[14] | t[15]
	if uint64(all)>>32 != 0 {
		return false
	}
	binary.LittleEndian.PutUint64(b[0:], uint64(t[0])|uint64(t[1])<<32)
	binary.LittleEndian.PutUint64(b[8:], uint64(t[2])|uint64(t[3])<<32)
	binary.LittleEndian.PutUint64(b[16:], uint64(t[4])|uint64(t[5])<<32)
	binary.LittleEndian.PutUint64(b[24:], uint64(t[6])|uint64(t[7])<<32)
	binary.LittleEndian.PutUint64(b[32:], uint64(t[8])|uint64(t[9])<<32)
	binary.LittleEndian.PutUint64(b[40:], uint64(t[10])|uint64(t[11])<<32)
	binary.LittleEndian.PutUint64(b[48:], uint64(t[12])|uint64(t[13])<<32)
	binary.LittleEndian.PutUint64(b[56:], uint64(t[14])|uint64(t[15])<<32)
	return true
}
