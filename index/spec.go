package index

import (
	"sync"
	"time"
	"unsafe"

	"github.com/warmroute/warmroute/internal/prefetch"
)

// spec is one speculative entry: endpoint ep is predicted to hold a key since
// decision d was made at time at, until expires (Unix nanoseconds).
type spec struct {
	owner    uint32 // endpoint id, with remoteBit set for another replica's prediction
	next     uint32 // 1-based; 0 ends the list (or the free list)
	decision DecisionID
	at       int64
	expires  int64
}

// remoteBit marks a prediction applied from another router replica. Endpoint
// ids fit in 24 bits (maxEndpoints), so the flag rides in the id's top bit
// and an entry stays 32 bytes.
const remoteBit = 1 << 31

func (s *spec) endpoint() uint32 { return s.owner &^ remoteBit }

func (s *spec) remote() bool { return s.owner&remoteBit != 0 }

func ownerOf(ep uint32, remote bool) uint32 {
	if remote {
		return ep | remoteBit
	}
	return ep
}

// expiryRef queues one entry's expiry. An entry whose expiry was extended is
// queued again; the stale reference is recognised by its old time and skipped.
type expiryRef struct {
	key      Key
	endpoint uint32
	expires  int64
}

// specTable is the single-threaded speculative half of a shard. Entries live
// only until expiry (plus grace), so the table stays small: about decisions
// per second times blocks per prompt times TTL.
type specTable struct {
	// heads maps a key to the 1-based head of its prediction list. It is a
	// keyTable (the stamp unused) rather than a Go map: Lookup probes it for
	// every key in a shard holding predictions and every decision inserts
	// its missing blocks, and a flat probe is one dependent load. Its parts
	// make a growth copy a sixteenth of the shard's predictions, so the
	// decision that triggers one is not held up by the whole table.
	heads keyTable[keySlot]
	// specs is a chunked slab (specChunkBits), so growing it never copies
	// and never holds the shard's lock for a large copy.
	specs [][]spec
	size  uint32 // entries ever allocated
	free  uint32
	n     int
	queue expiryQueue
}

// specChunkBits sizes the prediction slab's chunks: 512 entries, 16 KiB,
// which every shard that ever held a prediction keeps.
const specChunkBits = 9

// at returns the prediction with 1-based index i.
func (t *specTable) at(i uint32) *spec {
	return &t.specs[(i-1)>>specChunkBits][(i-1)&(1<<specChunkBits-1)]
}

// alloc returns the 1-based index of a free prediction slot.
func (t *specTable) alloc() uint32 {
	if i := t.free; i != 0 {
		t.free = t.at(i).next
		return i
	}
	if t.size&(1<<specChunkBits-1) == 0 {
		t.specs = append(t.specs, make([]spec, 1<<specChunkBits))
	}
	t.size++
	return t.size
}

func newSpecTable() specTable { return specTable{} }

func (t *specTable) find(key Key, ep uint32) (at, prev uint32) {
	for i := t.heads.head(key); i != 0; i = t.at(i).next {
		if t.at(i).endpoint() == ep {
			return i, prev
		}
		prev = i
	}
	return 0, 0
}

// insert predicts key on ep since at. A live prediction from an earlier
// decision, local or remote, is kept (that decision's request is the one
// expected to store the block) and only its expiry is extended. It reports
// whether an entry was created.
func (t *specTable) insert(key Key, ep uint32, d DecisionID, at, expires int64, remote bool) bool {
	if i, _ := t.find(key, ep); i != 0 {
		s := t.at(i)
		if expires > s.expires {
			s.expires = expires
			t.queue.push(expiryRef{key, ep, expires})
		}
		return false
	}
	s := spec{owner: ownerOf(ep, remote), next: t.heads.head(key), decision: d, at: at, expires: expires}
	i := t.alloc()
	*t.at(i) = s
	t.heads.put(key, i, 0)
	t.n++
	t.queue.push(expiryRef{key, ep, expires})
	return true
}

// confirm ends ep's prediction of key, if any, as Confirmed or EarlyExpiry.
// It is find followed by end, with the key's heads slot probed once: end
// would probe for it again to unlink the list's first prediction (the usual
// case: a block is predicted for one endpoint), and a store confirms every
// block it stores (TestConfirmMatchesFindEnd compares the two).
func (t *specTable) confirm(key Key, ep uint32, now int64, out *pending) {
	if t.n == 0 {
		return // no probe in a shard without predictions
	}
	p := t.heads.part(key)
	slot, ok := p.find(key)
	if !ok {
		return
	}
	prev := uint32(0)
	for at := p.slots[slot].head; at != 0; prev, at = at, t.at(at).next {
		s := t.at(at)
		if s.endpoint() != ep {
			continue
		}
		kind := Confirmed
		if now >= s.expires {
			kind = EarlyExpiry
		}
		out.add(kind, ep, s.remote(), s.decision, time.Duration(now-s.at))
		switch {
		case prev != 0:
			t.at(prev).next = s.next
		case s.next == 0:
			t.heads.removeAt(p, slot)
		default:
			p.slots[slot].head = s.next
		}
		t.release(at)
		return
	}
}

// expire ends, as StaleExpiry, entries whose expiry plus grace has passed,
// oldest first, reading at most limit references of the queue. It returns
// how many it read and whether due references remain.
func (t *specTable) expire(now, grace int64, limit int, out *pending) (read int, more bool) {
	warm := 0 // due references at the front whose slots warmDue has read
	for t.queue.len() > 0 && t.queue.front().expires+grace <= now {
		if read == limit {
			return read, true
		}
		if warm == 0 {
			warm = t.warmDue(now, grace, min(limit-read, lookupBatch))
		}
		warm--
		read++
		r := t.queue.pop()
		if at, prev := t.find(r.key, r.endpoint); at != 0 && t.at(at).expires == r.expires {
			t.end(r.key, at, prev, StaleExpiry, now, out)
		}
	}
	return read, false
}

// warmDue prefetches the head slot and first prediction of each of up to n
// due references at the front of the queue, so that their cache misses
// overlap, and returns how many it found due (at least 1 when the front is
// due): first every reference's heads slot, then, reading those slots, each
// first prediction. Expiring references one by one would take each one's
// misses in turn: the table is too large to stay cached, and a reference was
// queued a TTL ago. Prefetching changes nothing, so the ending that follows
// is the same.
func (t *specTable) warmDue(now, grace int64, n int) int {
	q := &t.queue
	j := 0
	for ; j < n && j < q.n; j++ {
		r := &q.buf[(q.head+j)&(len(q.buf)-1)]
		if r.expires+grace > now {
			break
		}
		t.heads.prefetch(r.key)
	}
	for i := range j {
		if h := t.heads.head(q.buf[(q.head+i)&(len(q.buf)-1)].key); h != 0 {
			prefetch.Line(unsafe.Pointer(t.at(h)))
		}
	}
	return max(j, 1)
}

// dropKey ends every prediction of key as Dropped.
func (t *specTable) dropKey(key Key, now int64, out *pending) {
	for h := t.heads.head(key); h != 0; h = t.heads.head(key) {
		t.end(key, h, 0, Dropped, now, out)
	}
}

// dropEndpoint ends every prediction for ep as Dropped. It scans the table,
// which is fine for a rare reset and keeps every entry 32 bytes.
func (t *specTable) dropEndpoint(ep uint32, now int64, out *pending) {
	if t.n == 0 {
		return
	}
	// Ending an entry may delete its key, which moves other slots of the
	// flat table; collect the keys first.
	var keys []Key
	t.heads.all(func(k Key, _ uint32) { keys = append(keys, k) })
	for _, key := range keys {
		if at, prev := t.find(key, ep); at != 0 {
			t.end(key, at, prev, Dropped, now, out)
		}
	}
}

func (t *specTable) end(key Key, at, prev uint32, kind OutcomeKind, now int64, out *pending) {
	s := *t.at(at)
	out.add(kind, s.endpoint(), s.remote(), s.decision, time.Duration(now-s.at))
	if prev == 0 {
		if s.next == 0 {
			t.heads.remove(key)
		} else {
			t.heads.put(key, s.next, 0)
		}
	} else {
		t.at(prev).next = s.next
	}
	t.release(at)
}

// release returns the unlinked prediction at to the free list.
func (t *specTable) release(at uint32) {
	*t.at(at) = spec{next: t.free}
	t.free = at
	t.n--
}

// pending collects outcomes under a shard lock so they can be reported after
// every lock is released. Outcomes of one decision on one endpoint in one call
// are merged.
type pending []pendingOutcome

// pendingPool recycles the hot paths' outcome lists (Store, Speculate), so
// that ending predictions allocates nothing in steady state.
var pendingPool = sync.Pool{New: func() any { return new(pending) }}

func getPending() *pending {
	p := pendingPool.Get().(*pending)
	*p = (*p)[:0]
	return p
}

// putPending keeps lists of ordinary size; a huge one (an endpoint reset's)
// is left to the garbage collector.
func putPending(p *pending) {
	if cap(*p) <= 256 {
		pendingPool.Put(p)
	}
}

type pendingOutcome struct {
	kind     OutcomeKind
	endpoint uint32
	remote   bool
	decision DecisionID
	blocks   int
	latency  time.Duration
}

func (p *pending) add(kind OutcomeKind, ep uint32, remote bool, d DecisionID, latency time.Duration) {
	// Outcomes come in runs (an expiry queue and a confirmed chain are in
	// decision order), so the last outcome is checked first: a long list is
	// then scanned once per run rather than once per block.
	if n := len(*p); n > 0 {
		if o := &(*p)[n-1]; o.kind == kind && o.endpoint == ep && o.remote == remote && o.decision == d {
			o.blocks++
			o.latency = max(o.latency, latency)
			return
		}
	}
	for i := range *p {
		o := &(*p)[i]
		if o.kind == kind && o.endpoint == ep && o.remote == remote && o.decision == d {
			o.blocks++
			o.latency = max(o.latency, latency)
			return
		}
	}
	*p = append(*p, pendingOutcome{kind, ep, remote, d, 1, latency})
}
