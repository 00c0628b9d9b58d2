package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// bpe is a byte-pair-encoding model. For byte-level models the vocabulary is
// keyed by raw bytes (the byte-to-unicode mapping is undone once at load
// time), so encoding never materialises the mapped string.
type bpe struct {
	vocab        map[string]uint32
	merges       mergeTable // pair(a,b) -> rank<<32 | merged id
	byteLevel    bool
	byteIDs      [256]uint32 // byte-level: id of each single byte
	byteOK       [256]bool
	fallback     [256]uint32 // byte_fallback: id of <0xXX>
	byteFallback bool
	ignoreMerges bool
	unk          uint32
	hasUnk       bool
	fuseUnk      bool
	split        wordSplitter
	runeIDs      []uint32 // SentencePiece-style: id of each BMP rune, or noToken
	cache        *wordCache
	// single is the id a one-byte word encodes to, or noToken when it
	// does not encode to exactly one id (fillSingles).
	single [256]uint32
}

// fillSingles records what encodeWord gives each one-byte word, so that
// the commonest uncacheable pieces of prose (punctuation, a newline, a
// space) skip symbol setup: they were a tenth of encoding prose. The table
// is encodeWord's own output, so it cannot disagree with it.
func (m *bpe) fillSingles() {
	var sc bpeScratch
	for b := range 256 {
		m.single[b] = noToken
		if ids, err := m.encodeWord(nil, string([]byte{byte(b)}), &sc, false); err == nil && len(ids) == 1 {
			m.single[b] = ids[0]
		}
	}
}

func pairKey(a, b uint32) uint64 { return uint64(a)<<32 | uint64(b) }

// appendWord appends the ids of one pre-token to dst, from the word cache
// when it is there. The cache comes before the vocabulary lookup of
// ignore_merges models too: interleaved runs found it as fast on prose and
// 1.3-1.6x faster on mixed text, where the vocabulary misses more.
func (m *bpe) appendWord(dst []uint32, word string, scratch *bpeScratch) ([]uint32, error) {
	if len(word) == 1 {
		if id := m.single[word[0]]; id != noToken {
			return append(dst, id), nil
		}
	}
	if !cacheable(word) {
		return m.encodeWord(dst, word, scratch, true)
	}
	if out, ok := m.cache.appendHit(dst, word); ok {
		return out, nil
	}
	start := len(dst)
	dst, err := m.encodeWord(dst, word, scratch, false)
	if err == nil {
		m.cache.store(word, dst[start:])
	}
	return dst, err
}

// encodeWord encodes a word without looking it up; cachePieces caches the
// pieces a long SentencePiece-style word is split into.
func (m *bpe) encodeWord(dst []uint32, word string, scratch *bpeScratch, cachePieces bool) ([]uint32, error) {
	if m.ignoreMerges {
		if id, ok := m.vocab[word]; ok {
			return append(dst, id), nil
		}
	}
	if !m.split.on {
		return m.appendPiece(dst, word, scratch)
	}
	var err error
	for len(word) > 0 {
		n := m.split.cut(word, m.vocab)
		if dst, err = m.appendPieceCached(dst, word[:n], scratch, cachePieces); err != nil {
			return dst, err
		}
		word = word[n:]
	}
	return dst, nil
}

func (m *bpe) appendPieceCached(dst []uint32, piece string, scratch *bpeScratch, useCache bool) ([]uint32, error) {
	useCache = useCache && cacheable(piece)
	if useCache {
		if out, ok := m.cache.appendHit(dst, piece); ok {
			return out, nil
		}
	}
	start := len(dst)
	dst, err := m.appendPiece(dst, piece, scratch)
	if useCache && err == nil {
		m.cache.store(piece, dst[start:])
	}
	return dst, err
}

// appendPiece merges one piece of a word that no merge crosses out of.
func (m *bpe) appendPiece(dst []uint32, word string, scratch *bpeScratch) ([]uint32, error) {
	if err := scratch.chargeLong(word); err != nil {
		return dst, err
	}
	syms := scratch.syms[:0]
	var err error
	if m.byteLevel {
		syms, err = m.byteSymbols(syms, word)
	} else {
		syms, err = m.charSymbols(syms, word)
	}
	if err != nil {
		return dst, err
	}
	if len(syms) > 1 {
		if len(syms) <= naiveMergeLimit {
			syms = m.mergeNaive(syms, scratch)
		} else {
			syms = m.mergeHeap(syms, scratch)
		}
	}
	scratch.syms = syms
	return append(dst, syms...), nil
}

func (m *bpe) byteSymbols(syms []uint32, word string) ([]uint32, error) {
	for i := 0; i < len(word); i++ {
		b := word[i]
		if !m.byteOK[b] {
			return syms, fmt.Errorf("encoding byte 0x%02x: %w", b, ErrUnknownToken)
		}
		syms = append(syms, m.byteIDs[b])
	}
	return syms, nil
}

// charSymbols starts a SentencePiece-style word from its characters, using
// <0xXX> byte tokens for characters outside the vocabulary when the model
// has byte fallback, and the (optionally fused) unknown token otherwise.
func (m *bpe) charSymbols(syms []uint32, word string) ([]uint32, error) {
	unkPending := false
	for i := 0; i < len(word); {
		r, n := utf8.DecodeRuneInString(word[i:])
		ch := word[i : i+n]
		i += n
		if id, ok := m.charID(r, ch); ok {
			if unkPending {
				syms, unkPending = append(syms, m.unk), false
			}
			syms = append(syms, id)
			continue
		}
		if m.byteFallback && m.hasAllFallback(ch) {
			for k := 0; k < len(ch); k++ {
				syms = append(syms, m.fallback[ch[k]])
			}
			continue
		}
		if !m.hasUnk {
			return syms, fmt.Errorf("encoding %q: %w", ch, ErrUnknownToken)
		}
		if unkPending && !m.fuseUnk {
			syms = append(syms, m.unk)
		}
		unkPending = true
	}
	if unkPending {
		syms = append(syms, m.unk)
	}
	return syms, nil
}

// charID looks up a one-character token, from the table when the rune is
// in it (a map lookup per character dominated Gemma 3 encoding).
func (m *bpe) charID(r rune, ch string) (uint32, bool) {
	if int(r) < len(m.runeIDs) && (r != utf8.RuneError || len(ch) > 1) {
		id := m.runeIDs[r]
		return id, id != noToken
	}
	id, ok := m.vocab[ch]
	return id, ok
}

func (m *bpe) hasAllFallback(ch string) bool {
	for k := 0; k < len(ch); k++ {
		if m.fallback[ch[k]] == noToken {
			return false
		}
	}
	return true
}

// noToken marks a missing entry in the fixed byte tables.
const noToken = ^uint32(0)

// naiveMergeLimit is the word length up to which repeated linear scans beat
// a heap. Both orders apply the lowest-ranked pair first, leftmost among
// equals, so they produce identical output.
const naiveMergeLimit = 48

// mergeNaive keeps the merge value (rank<<32 | id) of every adjacent pair
// and, after each merge, looks up only the two pairs that changed. Ranks are
// unique per pair, so comparing values compares ranks; strict < keeps the
// leftmost among equals.
func (m *bpe) mergeNaive(syms []uint32, sc *bpeScratch) []uint32 {
	vals := resizeU64(sc.vals, len(syms)-1)
	for i := range vals {
		vals[i] = m.pairValue(syms[i], syms[i+1])
	}
	for len(vals) > 0 {
		best, bestV := -1, noMerge
		for i, v := range vals {
			if v < bestV {
				best, bestV = i, v
			}
		}
		if best < 0 {
			break
		}
		syms[best] = uint32(bestV)
		syms = append(syms[:best+1], syms[best+2:]...)
		vals = append(vals[:best], vals[best+1:]...)
		if best < len(vals) {
			vals[best] = m.pairValue(syms[best], syms[best+1])
		}
		if best > 0 {
			vals[best-1] = m.pairValue(syms[best-1], syms[best])
		}
	}
	sc.vals = vals
	return syms
}

// noMerge is the pair value of a pair that does not merge; it sorts after
// every real one.
const noMerge = ^uint64(0)

func (m *bpe) pairValue(a, b uint32) uint64 {
	return m.merges.get(pairKey(a, b))
}
