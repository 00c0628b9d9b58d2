package sim

// Distinct counts the cache's distinct blocks: a block computed twice by
// concurrent requests is listed twice but is one key to a router.
func (c CacheState) Distinct() int {
	seen := map[uint64]bool{}
	for _, b := range c.Blocks {
		seen[b.Hash] = true
	}
	return len(seen)
}

// LeafChains returns, for every cached block that no other cached block
// extends, the token ids of its whole chain from the first block. A router
// that holds each leaf chain's full leading run holds every cached block.
// Blocks whose ancestry is not cached (an evicted parent) have no chain and
// are counted in orphans.
func (c CacheState) LeafChains() (chains [][]uint32, orphans int) {
	byHash := map[uint64]CacheBlock{}
	parents := map[uint64]bool{}
	for _, b := range c.Blocks {
		byHash[b.Hash] = b
		if b.ParentHash != nil {
			parents[*b.ParentHash] = true
		}
	}
	for h, b := range byHash {
		if parents[h] {
			continue
		}
		if chain, ok := chainOf(byHash, b); ok {
			chains = append(chains, chain)
		} else {
			orphans++
		}
	}
	return chains, orphans
}

func chainOf(byHash map[uint64]CacheBlock, b CacheBlock) ([]uint32, bool) {
	var blocks []CacheBlock
	for {
		blocks = append(blocks, b)
		if b.ParentHash == nil {
			break
		}
		p, ok := byHash[*b.ParentHash]
		if !ok || len(blocks) > len(byHash) {
			return nil, false
		}
		b = p
	}
	var toks []uint32
	for i := len(blocks) - 1; i >= 0; i-- {
		for _, t := range blocks[i].TokenIDs {
			toks = append(toks, uint32(t))
		}
	}
	return toks, true
}
