package index

// reserveKeys grows, shard by shard, the key tables that keys (sorted or
// not) will be inserted into, so Replace's walk never grows a table: one
// growth per part to its final size instead of a doubling series, each a
// copy of the whole part (flatKeys.reserve says how keys already present,
// such as other endpoints' copies, are treated).
func (ix *Index) reserveKeys(keys []heldKey) {
	if len(keys) < bulkMin {
		return
	}
	counts := make([][keyParts]int, len(ix.shards))
	for i := range keys {
		k := uint64(keys[i].key)
		counts[ix.shardIndex(keys[i].key)][(k>>32)&(keyParts-1)]++
	}
	for si := range counts {
		s := &ix.shards[si]
		locked := false
		for p, n := range counts[si] {
			if n == 0 {
				continue
			}
			if !locked {
				s.mu.Lock()
				locked = true
			}
			s.c.keys.parts[p].reserve(n)
		}
		if locked {
			s.mu.Unlock()
		}
	}
}
