package sim

import (
	"slices"
	"testing"
)

// testCache is a kvCache without events, with a fixed seed.
func testCache(t testing.TB, blockSize, numBlocks int) *kvCache {
	t.Helper()
	m := newEngineMetrics()
	seed := int64(7)
	opts := Options{BlockSize: blockSize, NumBlocks: numBlocks, EngineSeed: &seed, LoRAAdapters: []string{"ad"}}
	return newKVCache(opts, nil, m)
}

// run looks prompt up and stores it whole, like one finished prefill; the
// caller releases the result.
func run(c *kvCache, prompt []int, extra blockExtra) *seqBlocks {
	sb := c.begin(prompt, extra)
	c.store(sb, prompt, len(prompt))
	return sb
}

func seqTokens(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func TestCacheMatching(t *testing.T) {
	base := seqTokens(100, 64) // 16 blocks of 4
	tests := []struct {
		name       string
		first      []int
		firstExtra blockExtra
		second     []int
		extra      blockExtra
		wantCached int
	}{
		{"identical prompt leaves one token to compute", base, blockExtra{}, base, blockExtra{}, 60},
		{"longer prompt hits every full block", base, blockExtra{}, append(slices.Clone(base), 1), blockExtra{}, 64},
		{"shared prefix of two blocks", base, blockExtra{}, append(slices.Clone(base[:8]), 9, 9, 9, 9, 9), blockExtra{}, 8},
		{"partial block never hits", base[:6], blockExtra{}, base[:7], blockExtra{}, 4},
		{"prompt shorter than a block", base[:3], blockExtra{}, base[:3], blockExtra{}, 0},
		{"one-block prompt cannot hit itself", base[:4], blockExtra{}, base[:4], blockExtra{}, 0},
		{"different first token misses all", base, blockExtra{}, append([]int{1}, base[1:]...), blockExtra{}, 0},
		{"cache salt isolates", base, blockExtra{}, base, blockExtra{salt: "tenant"}, 0},
		{"same salt shares", base, blockExtra{salt: "t"}, base, blockExtra{salt: "t"}, 60},
		{"lora isolates", base, blockExtra{}, base, blockExtra{lora: "ad"}, 0},
		{"same lora shares", base, blockExtra{lora: "ad"}, base, blockExtra{lora: "ad"}, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testCache(t, 4, 64)
			c.release(run(c, tt.first, tt.firstExtra))
			sb := c.begin(tt.second, tt.extra)
			defer c.release(sb)
			if sb.cached != tt.wantCached {
				t.Fatalf("cached = %d, want %d", sb.cached, tt.wantCached)
			}
		})
	}
}

func TestCacheRefcounts(t *testing.T) {
	c := testCache(t, 4, 8)
	p := seqTokens(0, 17) // 4 full blocks
	a := run(c, p, blockExtra{})
	b := c.begin(p, blockExtra{})
	if c.pool.used != 4 {
		t.Fatalf("used = %d, want 4 (b shares a's blocks)", c.pool.used)
	}
	for _, blk := range c.state().Blocks {
		if blk.Refs != 2 {
			t.Fatalf("block refs = %d, want 2", blk.Refs)
		}
	}
	c.release(a)
	if c.pool.used != 4 || len(c.pool.evictionOrder()) != 0 {
		t.Fatalf("after one release: used %d, evictable %d", c.pool.used, len(c.pool.evictionOrder()))
	}
	c.release(b)
	if c.pool.used != 0 || len(c.pool.evictionOrder()) != 4 {
		t.Fatalf("after both: used %d, evictable %d", c.pool.used, len(c.pool.evictionOrder()))
	}
}

func TestCacheEvictionOrder(t *testing.T) {
	c := testCache(t, 4, 4)
	a, b := seqTokens(0, 8), seqTokens(1000, 8) // two blocks each
	c.release(run(c, a, blockExtra{}))
	c.release(run(c, b, blockExtra{}))
	hashes := c.state().Hashes() // slots 0,1 = a; 2,3 = b
	t.Run("tail first, oldest request first", func(t *testing.T) {
		want := []blockID{1, 0, 3, 2}
		if got := c.pool.evictionOrder(); !slices.Equal(got, want) {
			t.Fatalf("eviction order = %v, want %v", got, want)
		}
	})
	t.Run("a hit refreshes the prefix", func(t *testing.T) {
		c.release(c.begin(append(slices.Clone(a[:4]), 5), blockExtra{})) // touches a's first block
		want := []blockID{1, 3, 2, 0}
		if got := c.pool.evictionOrder(); !slices.Equal(got, want) {
			t.Fatalf("eviction order = %v, want %v", got, want)
		}
	})
	t.Run("a full pool evicts the LRU block and keeps the rest", func(t *testing.T) {
		c.release(run(c, seqTokens(5000, 4), blockExtra{}))
		got := c.state().Hashes()
		if slices.Contains(got, hashes[1]) || !slices.Contains(got, hashes[0]) || len(got) != 4 {
			t.Fatalf("after eviction hashes = %v (had %v)", got, hashes)
		}
	})
	t.Run("referenced blocks are never evicted", func(t *testing.T) {
		held := c.begin(seqTokens(0, 5), blockExtra{}) // refs a's first block
		for i := range 3 {
			c.release(run(c, seqTokens(9000+i*10, 4), blockExtra{}))
		}
		if !slices.Contains(c.state().Hashes(), hashes[0]) {
			t.Fatal("a referenced block was evicted")
		}
		c.release(held)
	})
}

func TestCacheFullPoolLeavesBlocksUncached(t *testing.T) {
	c := testCache(t, 4, 2)
	sb := run(c, seqTokens(0, 16), blockExtra{}) // wants 4 blocks, 2 slots
	if len(sb.ids) != 2 || !sb.stuck {
		t.Fatalf("ids = %d stuck = %v, want 2 and stuck", len(sb.ids), sb.stuck)
	}
	if c.pool.usage() != 1 {
		t.Fatalf("usage = %v, want 1", c.pool.usage())
	}
	c.release(sb)
	if c.pool.usage() != 0 {
		t.Fatalf("usage after release = %v", c.pool.usage())
	}
}

func TestCacheDuplicatesFromConcurrentPrefill(t *testing.T) {
	c := testCache(t, 4, 8)
	p := seqTokens(0, 9)
	a, b := c.begin(p, blockExtra{}), c.begin(p, blockExtra{}) // both miss
	c.store(a, p, len(p))
	c.store(b, p, len(p))
	st := c.state()
	if len(st.Blocks) != 4 || st.Blocks[0].Hash != st.Blocks[2].Hash {
		t.Fatalf("want each block stored twice, got %d blocks", len(st.Blocks))
	}
	c.release(a)
	c.release(b)
	if hit := c.begin(p, blockExtra{}); hit.cached != 8 {
		t.Fatalf("cached = %d, want 8", hit.cached)
	}
}

func TestCacheResetAndRestart(t *testing.T) {
	c := testCache(t, 4, 8)
	p := seqTokens(0, 9)
	held := run(c, p, blockExtra{})
	if err := c.reset(); err == nil {
		t.Fatal("reset while blocks are in use must fail")
	}
	c.release(held)
	if err := c.reset(); err != nil || len(c.state().Blocks) != 0 {
		t.Fatalf("reset = %v, blocks left %d", err, len(c.state().Blocks))
	}
	before := run(c, p, blockExtra{})
	h := c.state().Hashes()
	c.restart()
	c.release(before) // an orphan from the old process: must not corrupt the pool
	after := run(c, p, blockExtra{})
	if got := c.state().Hashes(); !slices.Equal(got, h) {
		t.Fatalf("fixed seed: hashes after restart %v, want %v", got, h)
	}
	if c.pool.used != 2 {
		t.Fatalf("used = %d, want 2", c.pool.used)
	}
	c.release(after)
}

func TestRandomSeedChangesHashes(t *testing.T) {
	a, b := hashSeed(0, false), hashSeed(0, false)
	if a == b {
		t.Fatal("two random seeds are equal")
	}
	if hashSeed(3, true) != hashSeed(3, true) || hashSeed(3, true) == hashSeed(4, true) {
		t.Fatal("fixed seeds must be a function of the seed")
	}
}
