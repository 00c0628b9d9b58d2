package fleet

import (
	"container/list"
	"math/rand/v2"
	"time"

	"github.com/warmroute/warmroute/index"
)

// job is one request on an engine.
type job struct {
	tokens []uint32
	keys   []index.Key // the prompt's block keys, as engine block hashes
	silent bool
	queued time.Duration
	// done is called when the response ends, with the TTFT and the cached
	// tokens the engine's usage reports.
	firstToken func()
	done       func(ttft time.Duration, cached int)
}

// engine models one model server: MaxRunning slots, a FIFO of waiting
// requests, an LRU prefix cache of blocks and chunked prefill whose chunks
// become cacheable, and are published, once computed.
type engine struct {
	name    string
	l       *loop
	cost    Cost
	lat     Latency
	rng     *rand.Rand
	path    EventPath
	running int
	waiting []*job
	cache   map[index.Key]*list.Element
	lru     *list.List
	// lastDelivery keeps batches in order: a relay and the bus preserve it.
	lastDelivery time.Duration
	deliver      func(index.Stored)
}

func newEngine(name string, l *loop, cost Cost, lat Latency, path EventPath, rng *rand.Rand, deliver func(index.Stored)) *engine {
	return &engine{name: name, l: l, cost: cost, lat: lat, rng: rng, path: path,
		cache: map[index.Key]*list.Element{}, lru: list.New(), deliver: deliver}
}

// load is what an engine has in flight (running and waiting), for the oracle.
func (e *engine) load() int { return e.running + len(e.waiting) }

// cachedBlocks is how many of keys' leading blocks the cache holds now.
func (e *engine) cachedBlocks(keys []index.Key) int {
	n := 0
	for _, k := range keys {
		if _, ok := e.cache[k]; !ok {
			break
		}
		n++
	}
	return n
}

func (e *engine) submit(j *job) {
	j.queued = e.l.now
	if e.running < e.cost.MaxRunning {
		e.start(j)
		return
	}
	e.waiting = append(e.waiting, j)
}

// start admits j: it looks its prefix up (touching what it reuses), then
// computes the rest chunk by chunk.
func (e *engine) start(j *job) {
	e.running++
	cacheable := max(len(j.tokens)-1, 0) / BlockSize // vLLM never caches the last token's block
	hit := min(e.cachedBlocks(j.keys), cacheable)
	for _, k := range j.keys[:hit] {
		e.lru.MoveToFront(e.cache[k])
	}
	cachedTokens := hit * BlockSize
	wait := e.l.now - j.queued
	done := cachedTokens
	at := e.l.now
	first := true
	for done < len(j.tokens) {
		end := len(j.tokens)
		if e.cost.PrefillChunk > 0 {
			end = min(end, done+e.cost.PrefillChunk)
		}
		at += time.Duration(end-done) * e.cost.PrefillPerToken
		if first {
			at += e.cost.TTFT
			first = false
		}
		from, to := done/BlockSize, min(end/BlockSize, cacheable)
		if !j.silent && to > from {
			e.l.at(at, func() { e.computed(j, from, to) })
		}
		done = end
	}
	if first {
		at += e.cost.TTFT
	}
	ttft := wait + (at - e.l.now)
	e.l.at(at, j.firstToken)
	end := at + time.Duration(max(e.cost.OutputTokens-1, 0))*e.cost.DecodePerToken
	e.l.at(end, func() {
		j.done(ttft, cachedTokens)
		e.running--
		if len(e.waiting) > 0 {
			next := e.waiting[0]
			e.waiting = e.waiting[1:]
			e.start(next)
		}
	})
}

// computed caches blocks [from, to) of j and publishes them as one batch.
func (e *engine) computed(j *job, from, to int) {
	for _, k := range j.keys[from:to] {
		if el, ok := e.cache[k]; ok {
			e.lru.MoveToFront(el)
			continue
		}
		e.cache[k] = e.lru.PushFront(k)
	}
	for e.lru.Len() > e.cost.NumBlocks {
		old := e.lru.Back()
		e.lru.Remove(old)
		delete(e.cache, old.Value.(index.Key)) // removals are not published: the index keeps the block (a known gap of the model)
	}
	if e.path != Flowing {
		return
	}
	ev := index.Stored{Endpoint: e.name, Hashes: make([]uint64, to-from),
		Tokens: j.tokens[from*BlockSize : to*BlockSize], BlockSize: BlockSize, Identity: identity}
	for i, k := range j.keys[from:to] {
		ev.Hashes[i] = uint64(k)
	}
	if from > 0 {
		ev.Parent, ev.HasParent = uint64(j.keys[from-1]), true
	}
	at := e.l.now + e.lat.Delay
	if e.lat.Jitter > 0 {
		at += time.Duration(e.rng.Int64N(int64(e.lat.Jitter) + 1))
	}
	at = max(at, e.lastDelivery)
	e.lastDelivery = at
	e.l.at(at, func() { e.deliver(ev) })
}
