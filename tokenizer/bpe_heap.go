package tokenizer

// bpeScratch holds per-call buffers so long words do not allocate per merge.
// It is owned by one Encode call.
type bpeScratch struct {
	syms  []uint32
	vals  []uint64
	next  []int32
	prev  []int32
	alive []bool
	queue mergeQueue
	// longBytes counts the bytes of long pieces merged by this encode
	// (see MaxLongWordBytes); reset when an encode takes the scratch.
	longBytes int
}

// mergeCand is a candidate merge of the symbol at pos with its successor.
type mergeCand struct {
	rank  uint32
	pos   int32
	newID uint32
}

// mergeQueue is a binary min-heap ordered by rank, then position. It is
// typed rather than built on container/heap to avoid boxing every push.
type mergeQueue []mergeCand

func (c mergeCand) less(o mergeCand) bool {
	if c.rank != o.rank {
		return c.rank < o.rank
	}
	return c.pos < o.pos
}

func (q *mergeQueue) push(c mergeCand) {
	h := append(*q, c)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*q = h
}

func (q *mergeQueue) pop() mergeCand {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	h.down(0)
	*q = h
	return top
}

func (q mergeQueue) down(i int) {
	n := len(q)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q[r].less(q[l]) {
			m = r
		}
		if !q[m].less(q[i]) {
			return
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
}

func (q mergeQueue) init() {
	for i := len(q)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

// mergeHeap merges a long word in O(n log n). A popped candidate is stale
// when either symbol has changed since it was queued; merged symbols only
// grow, so "the pair still merges to the same id" detects that exactly.
func (m *bpe) mergeHeap(syms []uint32, sc *bpeScratch) []uint32 {
	n := len(syms)
	sc.next, sc.prev, sc.alive = resizeI32(sc.next, n), resizeI32(sc.prev, n), resizeBool(sc.alive, n)
	sc.queue = sc.queue[:0]
	for i := 0; i < n; i++ {
		sc.next[i], sc.prev[i], sc.alive[i] = int32(i+1), int32(i-1), true
		if i+1 < n {
			m.pushCand(sc, syms, int32(i), int32(i+1))
		}
	}
	sc.next[n-1] = -1
	sc.queue.init()
	for len(sc.queue) > 0 {
		c := sc.queue.pop()
		nx := sc.next[c.pos]
		if !sc.alive[c.pos] || nx < 0 {
			continue
		}
		v := m.merges.get(pairKey(syms[c.pos], syms[nx]))
		if v == noMerge || uint32(v) != c.newID {
			continue
		}
		syms[c.pos] = c.newID
		sc.alive[nx] = false
		sc.next[c.pos] = sc.next[nx]
		if nn := sc.next[nx]; nn >= 0 {
			sc.prev[nn] = c.pos
			m.pushCandHeap(sc, syms, c.pos, nn)
		}
		if p := sc.prev[c.pos]; p >= 0 {
			m.pushCandHeap(sc, syms, p, c.pos)
		}
	}
	out := syms[:0]
	for i := int32(0); i >= 0; i = sc.next[i] {
		out = append(out, syms[i])
	}
	return out
}

func (m *bpe) pushCand(sc *bpeScratch, syms []uint32, a, b int32) {
	if v := m.merges.get(pairKey(syms[a], syms[b])); v != noMerge {
		sc.queue = append(sc.queue, mergeCand{rank: uint32(v >> 32), pos: a, newID: uint32(v)})
	}
}

func (m *bpe) pushCandHeap(sc *bpeScratch, syms []uint32, a, b int32) {
	if v := m.merges.get(pairKey(syms[a], syms[b])); v != noMerge {
		sc.queue.push(mergeCand{rank: uint32(v >> 32), pos: a, newID: uint32(v)})
	}
}

func resizeI32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func resizeU64(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

func resizeBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	return s[:n]
}
