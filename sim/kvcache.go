package sim

import (
	"fmt"
	"sync"
)

// kvCache is the engine's prefix cache: a block pool, the hash chain and
// the event publisher behind one mutex, so that the order of pool changes
// is the order of their events. It is safe for concurrent use; the zero
// value is not usable, use newKVCache.
type kvCache struct {
	mu        sync.Mutex
	pool      *blockPool
	hasher    chainHasher
	root      digest
	seed      int64
	fixedSeed bool
	blockSize int
	gen       uint64     // bumped by restart; older seqBlocks are orphans
	pub       *publisher // nil when KV events are off
	loraIDs   map[string]int
	metrics   *engineMetrics
}

// seqBlocks is one request's hold on the cache: the digests of its prompt's
// full blocks and the slots it references, in block order. Owned by its
// Sequence.
type seqBlocks struct {
	gen    uint64
	extra  blockExtra
	hashes []digest
	ids    []blockID
	cached int  // prompt tokens served from cache
	stuck  bool // a slot could not be had: later blocks stay uncached
}

func newKVCache(opts Options, pub *publisher, m *engineMetrics) *kvCache {
	c := &kvCache{pool: newBlockPool(opts.BlockSize, opts.NumBlocks), blockSize: opts.BlockSize,
		pub: pub, loraIDs: map[string]int{}, metrics: m}
	if opts.EngineSeed != nil {
		c.seed, c.fixedSeed = *opts.EngineSeed, true
	}
	c.root = hashSeed(c.seed, c.fixedSeed)
	for i, name := range opts.LoRAAdapters {
		c.loraIDs[name] = i + 1
	}
	return c
}

// begin looks prompt up and references its cached prefix. Like vLLM it
// matches full blocks only and leaves at least one prompt token to compute,
// so at most (len-1)/blockSize blocks can hit.
func (c *kvCache) begin(prompt []int, extra blockExtra) *seqBlocks {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(prompt) / c.blockSize
	sb := &seqBlocks{gen: c.gen, extra: extra, hashes: c.hasher.chain(c.root, prompt, c.blockSize, n, extra)}
	hittable := (len(prompt) - 1) / c.blockSize
	sb.ids = c.pool.match(sb.hashes[:hittable])
	sb.cached = len(sb.ids) * c.blockSize
	c.metrics.prefixQueries.Add(float64(len(prompt)))
	c.metrics.prefixHits.Add(float64(sb.cached))
	c.metrics.kvUsage.Set(c.pool.usage())
	return sb
}

// store caches the blocks of prompt that are full once its first computed
// tokens are, and publishes them as one step's batch: the evictions that
// made room, then one BlockStored. Blocks are stored when scheduled, as
// vLLM does, so a request arriving during this prefill already hits them.
func (c *kvCache) store(sb *seqBlocks, prompt []int, computed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sb.gen != c.gen || sb.stuck {
		return
	}
	var evs []kvEvent
	stored := kvEvent{kind: blockStored, blockSize: c.blockSize, loraName: sb.extra.lora, loraID: c.loraIDs[sb.extra.lora]}
	for i := len(sb.ids); i < computed/c.blockSize; i++ {
		id, evicted, ok := c.pool.allocate()
		if !ok {
			sb.stuck = true
			break
		}
		if evicted != nil {
			evs = append(evs, kvEvent{kind: blockRemoved, hashes: []uint64{evicted.wire()}})
		}
		var parent *digest
		if i > 0 {
			parent = &sb.hashes[i-1]
		}
		c.pool.commit(id, sb.hashes[i], parent, prompt[i*c.blockSize:(i+1)*c.blockSize], sb.extra.lora)
		sb.ids = append(sb.ids, id)
		stored.addBlock(sb.hashes[i], parent, prompt[i*c.blockSize:(i+1)*c.blockSize])
	}
	if len(stored.hashes) > 0 {
		evs = append(evs, stored)
	}
	c.publishLocked(evs)
	c.metrics.kvUsage.Set(c.pool.usage())
}

func (e *kvEvent) addBlock(h digest, parent *digest, tokens []int) {
	if len(e.hashes) == 0 && parent != nil {
		e.parent, e.hasParent = parent.wire(), true
	}
	e.hashes = append(e.hashes, h.wire())
	e.tokens = append(e.tokens, tokens...)
}

func (c *kvCache) publishLocked(evs []kvEvent) {
	if c.pub != nil && len(evs) > 0 {
		c.pub.publish(evs)
	}
}

// release drops the request's references; its blocks stay cached until
// evicted.
func (c *kvCache) release(sb *seqBlocks) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sb.gen == c.gen {
		c.pool.release(sb.ids)
	}
	sb.ids = nil
	c.metrics.kvUsage.Set(c.pool.usage())
}

// reset empties the cache and announces AllBlocksCleared. Like vLLM it
// refuses while running requests hold blocks.
func (c *kvCache) reset() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool.used > 0 {
		return fmt.Errorf("resetting prefix cache: %d blocks in use: %w", c.pool.used, ErrCacheInUse)
	}
	c.pool.clear(len(c.pool.blocks))
	c.publishLocked([]kvEvent{{kind: allBlocksCleared}})
	c.metrics.kvUsage.Set(0)
	return nil
}

// restart is a process restart: the cache is gone without any event, the
// event sequence starts over at 0 and, without a fixed seed, every block
// hash changes. Running requests keep going but their blocks are orphans.
func (c *kvCache) restart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.pool.clear(len(c.pool.blocks))
	c.root = hashSeed(c.seed, c.fixedSeed)
	if c.pub != nil {
		c.pub.restart()
	}
	c.metrics.kvUsage.Set(0)
}
