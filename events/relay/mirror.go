package relay

import (
	"crypto/rand"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/wire"
)

// mirror is the relay's compact copy of the engine's live block set, built
// by applying every batch the relay forwards, so that a router can ask for
// the whole state at any time (snapshot.go) instead of relying on having
// seen every batch since the engine started.
//
// It keeps the engine's semantics: a hash holds at most one copy per
// medium, so a re-announcement (kv_cache_report_mode=full) is idempotent and
// one BlockRemoved ends it; AllBlocksCleared empties it. A removed block
// whose descendants are still held stays as a chain-only entry (no media)
// so that a snapshot can still key them; it goes with its last descendant.
//
// It holds what a router keys: only full-attention KV cache groups
// (wire.FullAttention; a hybrid model's sliding-window or Mamba group
// repeats the full-attention group's hashes for other token positions, and
// its removals name its group), each block's extra keys (cache salt,
// multimodal hashes), and SGLang's cache_salt as the extra-keys entry vLLM
// would have written for the block (wire.SaltExtraKey), so a router that
// rebuilds from a snapshot keys every block under the identity the events
// gave it.
//
// Its epoch changes whenever the engine's identity may have changed (relay
// start, any endpoint reset the relay publishes, an undecodable payload):
// a router that sees another epoch than it synced with knows its state may
// be another engine's.
//
// Memory is bounded by maxBlocks entries; blocks beyond it are dropped and
// counted. Safe for concurrent use.
type mirror struct {
	mu        sync.Mutex
	maxBlocks int
	index     map[uint64]uint32 // engine hash -> position in ents
	ents      []mblock
	freeEnts  []uint32
	extras    map[uint64][]byte // extra keys of the few blocks that have them
	sparse    map[int]struct{}  // KV cache groups that are not full attention
	slabs     []tokenSlab       // one per block size seen
	media     []string          // bit i of mblock.media is media[i]
	loras     []string          // mblock.lora indexes it; loras[0] is ""
	loraIdx   map[string]uint16
	epoch     uint64
	epochNow  atomic.Uint64 // epoch, readable without the lock a snapshot holds
	seq       uint64
	hasSeq    bool
	parity    bool // flagEmitted's meaning for the next snapshot walk
	metrics   *Metrics
}

// mblock is one mirrored block, 40 bytes in a dense slice (so a snapshot
// walks memory in order and follows parents by position), beside its
// 16-byte index slot and its tokens in a slab.
type mblock struct {
	hash, parent uint64
	up           uint32 // position of the linked parent (flagLinked)
	slot         uint32 // in slabs[slab]
	children     uint32 // linked entries naming this one as parent
	lora         uint16
	slab         uint8
	media        uint8
	flags        uint8
}

const (
	flagHasParent = 1 << iota
	flagLinked    // counted in the parent's children; up is its position
	flagEmitted   // visited by the current snapshot walk (see mirror.parity)
	flagExtra
	flagUsed // the position holds a block (not on the free list)
)

// DefaultMirrorMaxBlocks bounds a mirror by default: at block size 16
// about 100 MB (see the README for the measured bytes per block).
const DefaultMirrorMaxBlocks = 1_000_000

// maxMedia and maxLoRAs bound the name tables (a medium is a bit of a byte;
// adapter ids are 16-bit).
const (
	maxMedia = 8
	maxLoRAs = 1 << 16
)

// Reasons a block is not mirrored (relay_mirror_dropped_blocks_total).
const (
	dropFull        = "full"
	dropUnknownHash = "unknown_hash"
	dropMedia       = "media"
	dropTokens      = "tokens"
	dropLoRA        = "lora"
)

func newMirror(maxBlocks int, m *Metrics) *mirror {
	mr := &mirror{maxBlocks: maxBlocks, metrics: m}
	mr.clear()
	mr.setEpoch()
	return mr
}

func (mr *mirror) setEpoch() uint64 {
	mr.epoch = newEpoch()
	mr.epochNow.Store(mr.epoch)
	return mr.epoch
}

// newEpoch is random, non-zero and below 2^53 so it survives JSON readers
// that hold numbers as doubles.
func newEpoch() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])>>11 | 1
}

func (mr *mirror) clear() {
	mr.index = map[uint64]uint32{}
	mr.ents, mr.freeEnts = nil, nil
	mr.extras = map[uint64][]byte{}
	mr.slabs = nil
	mr.loras, mr.loraIdx = []string{""}, map[string]uint16{"": 0}
	mr.metrics.mirrorBlocks.Set(0)
}

// Epoch returns the current epoch without waiting for a snapshot in
// progress.
func (mr *mirror) Epoch() uint64 { return mr.epochNow.Load() }

// reset forgets everything and starts a new epoch: the relay told routers
// the endpoint's state is unknown.
func (mr *mirror) reset() uint64 {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	mr.clear()
	mr.hasSeq = false
	return mr.setEpoch()
}

// apply applies the batch forwarded as seq; b is nil when its payload did
// not decode, which leaves the engine's state unknowable: a new epoch.
func (mr *mirror) apply(seq uint64, b *wire.Batch) uint64 {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	mr.seq, mr.hasSeq = seq, true
	if b == nil {
		mr.clear()
		return mr.setEpoch()
	}
	for i := range b.Events {
		ev := &b.Events[i]
		if mr.sparseGroup(ev) {
			continue
		}
		switch ev.Kind {
		case wire.KindBlockStored:
			mr.store(ev)
		case wire.KindBlockRemoved:
			mr.remove(ev)
		case wire.KindAllBlocksCleared:
			mr.clear()
		}
	}
	mr.metrics.mirrorBlocks.Set(float64(len(mr.index)))
	return mr.epoch
}

// sparseGroup reports whether ev belongs to a KV cache group that is not
// full attention, learning the groups from stores (removals name only the
// group), as the router's index sink does.
func (mr *mirror) sparseGroup(ev *wire.Event) bool {
	switch ev.Kind {
	case wire.KindBlockStored:
		if wire.FullAttention(ev.SpecKind) {
			return false
		}
		if mr.sparse == nil {
			mr.sparse = map[int]struct{}{}
		}
		mr.sparse[ev.GroupIdx] = struct{}{}
		return true
	case wire.KindBlockRemoved:
		_, ok := mr.sparse[ev.GroupIdx]
		return ok
	}
	return false
}

func (mr *mirror) drop(reason string, n int) {
	mr.metrics.mirrorDropped.WithLabelValues(reason).Add(float64(n))
}

func (mr *mirror) mediumBit(name string) (uint8, bool) {
	for i, m := range mr.media {
		if m == name {
			return 1 << i, true
		}
	}
	if len(mr.media) == maxMedia {
		return 0, false
	}
	mr.media = append(mr.media, name)
	return 1 << (len(mr.media) - 1), true
}

func (mr *mirror) loraID(name string) (uint16, bool) {
	if id, ok := mr.loraIdx[name]; ok {
		return id, true
	}
	if len(mr.loras) == maxLoRAs {
		return 0, false
	}
	id := uint16(len(mr.loras))
	mr.loras = append(mr.loras, name)
	mr.loraIdx[name] = id
	return id, true
}

func (mr *mirror) store(ev *wire.Event) {
	bit, ok := mr.mediumBit(ev.Medium)
	if !ok {
		mr.drop(dropMedia, len(ev.BlockHashes))
		return
	}
	if ev.BlockSize <= 0 || len(ev.TokenIDs) == 0 {
		mr.storeKnown(ev.BlockHashes, bit)
		return
	}
	lora, ok := mr.loraID(ev.LoRAName)
	if !ok {
		mr.drop(dropLoRA, len(ev.BlockHashes))
		return
	}
	bs := ev.BlockSize
	if bs > snapshot.MaxTokensPerBlock {
		mr.drop(dropTokens, len(ev.BlockHashes))
		return
	}
	parent, hasParent := ev.ParentHash, ev.HasParent
	for i, h := range ev.BlockHashes {
		if (i+1)*bs > len(ev.TokenIDs) {
			mr.drop(dropTokens, len(ev.BlockHashes)-i)
			return
		}
		var extra []byte
		if i < len(ev.ExtraKeys) {
			extra = ev.ExtraKeys[i]
		} else if i == 0 && !ev.HasParent && ev.CacheSalt != "" {
			extra = wire.SaltExtraKey(ev.LoRAName, ev.CacheSalt)
		}
		mr.storeBlock(h, parent, hasParent, ev.TokenIDs[i*bs:(i+1)*bs], lora, bit, extra)
		parent, hasParent = h, true
	}
}

// storeKnown adds a medium to blocks the engine announced before (an
// offload tier sends no tokens for them).
func (mr *mirror) storeKnown(hashes []uint64, bit uint8) {
	for _, h := range hashes {
		at, ok := mr.index[h]
		if !ok {
			mr.drop(dropUnknownHash, 1)
			continue
		}
		mr.ents[at].media |= bit
	}
}

func (mr *mirror) storeBlock(h, parent uint64, hasParent bool, toks []uint32, lora uint16, bit uint8, extra []byte) {
	if at, ok := mr.index[h]; ok {
		old := &mr.ents[at]
		if mr.sameContent(old, parent, hasParent, toks, lora) {
			old.media |= bit // a re-announcement: idempotent
			return
		}
		// The engine reused the hash for other content, so the old block is
		// gone; its descendants keep naming the hash (and its position).
		children := old.children
		mr.unlinkParent(old)
		mr.slabs[old.slab].free(old.slot)
		delete(mr.extras, h)
		mr.fill(at, h, parent, hasParent, toks, lora, bit, extra)
		mr.ents[at].children = children
		return
	}
	if len(mr.index) >= mr.maxBlocks {
		mr.drop(dropFull, 1)
		return
	}
	var at uint32
	if n := len(mr.freeEnts); n > 0 {
		at, mr.freeEnts = mr.freeEnts[n-1], mr.freeEnts[:n-1]
	} else {
		at = uint32(len(mr.ents))
		mr.ents = append(mr.ents, mblock{})
	}
	mr.index[h] = at
	mr.fill(at, h, parent, hasParent, toks, lora, bit, extra)
}

// fill writes a new block at position at.
func (mr *mirror) fill(at uint32, h, parent uint64, hasParent bool, toks []uint32, lora uint16, bit uint8, extra []byte) {
	si := mr.slabFor(len(toks))
	b := mblock{hash: h, lora: lora, slab: uint8(si), media: bit, slot: mr.slabs[si].alloc(toks), flags: flagUsed}
	if mr.parity {
		b.flags |= flagEmitted
	}
	if hasParent {
		b.parent, b.flags = parent, b.flags|flagHasParent
		if up, ok := mr.index[parent]; ok && up != at {
			mr.ents[up].children++
			b.up, b.flags = up, b.flags|flagLinked
		}
	}
	if extra != nil {
		mr.extras[h] = slices.Clone(extra)
		b.flags |= flagExtra
	}
	mr.ents[at] = b
}

func (mr *mirror) sameContent(b *mblock, parent uint64, hasParent bool, toks []uint32, lora uint16) bool {
	if b.lora != lora || (b.flags&flagHasParent != 0) != hasParent || (hasParent && b.parent != parent) ||
		mr.slabs[b.slab].size != len(toks) {
		return false
	}
	return slices.Equal(mr.slabs[b.slab].tokens(b.slot), toks)
}

func (mr *mirror) remove(ev *wire.Event) {
	bit, ok := mr.mediumBit(ev.Medium)
	if !ok {
		return
	}
	for _, h := range ev.BlockHashes {
		if at, ok := mr.index[h]; ok {
			mr.ents[at].media &^= bit
			mr.release(at)
		}
	}
}

// release deletes the block at position at when it holds no copy and no
// held descendant names it, then does the same for its parent.
func (mr *mirror) release(at uint32) {
	for {
		b := &mr.ents[at]
		if b.media != 0 || b.children != 0 {
			return
		}
		delete(mr.index, b.hash)
		delete(mr.extras, b.hash)
		mr.slabs[b.slab].free(b.slot)
		linked, up := mr.unlinkParent(b), b.up
		*b = mblock{}
		mr.freeEnts = append(mr.freeEnts, at)
		if !linked {
			return
		}
		at = up
	}
}

// unlinkParent takes b out of its parent's children; it reports whether
// there was a linked parent.
func (mr *mirror) unlinkParent(b *mblock) bool {
	if b.flags&flagLinked == 0 {
		return false
	}
	mr.ents[b.up].children--
	b.flags &^= flagLinked
	return true
}

func (mr *mirror) slabFor(size int) int {
	for i := range mr.slabs {
		if mr.slabs[i].size == size {
			return i
		}
	}
	mr.slabs = append(mr.slabs, tokenSlab{size: size})
	return len(mr.slabs) - 1
}

// tokenSlab stores fixed-size token blocks in pages, with a free list, so
// the mirror's tokens cost their bytes and no per-block slice header, and
// growth never copies.
type tokenSlab struct {
	size  int
	pages [][]uint32
	used  uint32 // slots ever handed out
	freed []uint32
}

const slabPageBlocks = 4096

func (s *tokenSlab) tokens(slot uint32) []uint32 {
	p := s.pages[slot/slabPageBlocks]
	off := int(slot%slabPageBlocks) * s.size
	return p[off : off+s.size : off+s.size]
}

func (s *tokenSlab) alloc(toks []uint32) uint32 {
	var slot uint32
	if n := len(s.freed); n > 0 {
		slot, s.freed = s.freed[n-1], s.freed[:n-1]
	} else {
		if s.used%slabPageBlocks == 0 {
			s.pages = append(s.pages, make([]uint32, slabPageBlocks*s.size))
		}
		slot = s.used
		s.used++
	}
	copy(s.tokens(slot), toks)
	return slot
}

func (s *tokenSlab) free(slot uint32) { s.freed = append(s.freed, slot) }
