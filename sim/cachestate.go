package sim

// CacheBlock is one cached block as GET /debug/cache reports it: what an
// engine would announce in BlockStored. A plain value.
type CacheBlock struct {
	// Hash is the engine hash as KV events carry it.
	Hash uint64 `json:"block_hash"`
	// ParentHash is nil for a sequence's first block.
	ParentHash *uint64 `json:"parent_block_hash"`
	TokenIDs   []int   `json:"token_ids"`
	BlockSize  int     `json:"block_size"`
	// LoRAName is empty for the base model.
	LoRAName string `json:"lora_name,omitempty"`
	// Refs counts running requests using the block; 0 means evictable.
	Refs int `json:"refs"`
}

// CacheState is the simulator's true prefix-cache content, for tests that
// compare a router's index with it. A plain value.
type CacheState struct {
	BlockSize  int          `json:"block_size"`
	NumBlocks  int          `json:"num_blocks"`
	UsedBlocks int          `json:"used_blocks"`
	Blocks     []CacheBlock `json:"blocks"`
}

// Hashes returns the engine hashes of every cached block, one per block
// (duplicates included).
func (s CacheState) Hashes() []uint64 {
	out := make([]uint64, len(s.Blocks))
	for i, b := range s.Blocks {
		out[i] = b.Hash
	}
	return out
}

// state copies the cache's content, in slot order.
func (c *kvCache) state() CacheState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CacheState{BlockSize: c.blockSize, NumBlocks: len(c.pool.blocks), UsedBlocks: c.pool.used, Blocks: []CacheBlock{}}
	for i := range c.pool.blocks {
		b := &c.pool.blocks[i]
		if !b.cached {
			continue
		}
		cb := CacheBlock{Hash: b.hash.wire(), TokenIDs: append([]int(nil), b.tokens...),
			BlockSize: c.blockSize, LoRAName: b.lora, Refs: b.refs}
		if b.hasParent {
			p := b.parent.wire()
			cb.ParentHash = &p
		}
		st.Blocks = append(st.Blocks, cb)
	}
	return st
}
