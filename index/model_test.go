package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// model is the reference the index is checked against: the same rules written
// with plain maps and no attention to memory or speed.
type model struct {
	rev  map[mholder]map[uint64]Key
	refs map[mholder]map[Key]refCounts
	spec map[string]map[Key]int64 // endpoint -> key -> expiry
	now  int64
	// confirmed counts predictions ended by a store for their endpoint. The
	// runner sweeps before every operation and the fixture has no grace, so
	// every prediction a store finds is live: it ends Confirmed.
	confirmed int64
}

type mholder struct {
	ep   string
	rank int
}

type refCounts [numMedia]int

func (r refCounts) total() int { return r[0] + r[1] + r[2] + r[3] }

func newModel() *model {
	return &model{rev: map[mholder]map[uint64]Key{}, refs: map[mholder]map[Key]refCounts{}, spec: map[string]map[Key]int64{}}
}

func (m *model) holder(ep string, rank int) mholder {
	h := mholder{ep, rank}
	if m.rev[h] == nil {
		m.rev[h], m.refs[h] = map[uint64]Key{}, map[Key]refCounts{}
	}
	return h
}

func (m *model) store(ev Stored) {
	h := m.holder(ev.Endpoint, ev.Rank)
	parent := ev.Identity.Root()
	if k, ok := m.rev[h][ev.Parent]; ev.HasParent && ok {
		parent = k
	}
	keys, _ := AppendChain(nil, parent, testBS, ev.Tokens)
	for i, key := range keys[:min(len(keys), len(ev.Hashes))] {
		old, ok := m.rev[h][ev.Hashes[i]]
		if ok && old != key {
			delete(m.refs[h], old)
		}
		m.rev[h][ev.Hashes[i]] = key
		r := m.refs[h][key]
		// A hash announced again for the same block on a medium that
		// holds it (vLLM's kv_cache_report_mode=full) is one copy, not two.
		if !ok || old != key || r[ev.Medium] == 0 {
			r[ev.Medium]++
		}
		m.refs[h][key] = r
		if _, ok := m.spec[ev.Endpoint][key]; ok {
			m.confirmed++
			delete(m.spec[ev.Endpoint], key)
		}
	}
}

func (m *model) remove(ep string, rank int, hs []uint64, med Medium) int {
	h := m.holder(ep, rank)
	unknown := 0
	for _, x := range hs {
		key, ok := m.rev[h][x]
		r := m.refs[h][key]
		switch {
		case !ok:
			unknown++
		case r[med] > 0:
			r[med]--
			m.refs[h][key] = r
			if r.total() == 0 {
				delete(m.refs[h], key)
				delete(m.rev[h], x)
			}
		default:
			unknown++
			if r.total() == 0 {
				delete(m.rev[h], x)
			}
		}
	}
	return unknown
}

func (m *model) clearRank(ep string, rank int) {
	h := m.holder(ep, rank)
	m.rev[h], m.refs[h] = map[uint64]Key{}, map[Key]refCounts{}
}

func (m *model) speculate(ep string, keys []Key, expires int64) {
	if m.spec[ep] == nil {
		m.spec[ep] = map[Key]int64{}
	}
	for _, k := range keys {
		if m.holds(ep, k) {
			continue
		}
		m.spec[ep][k] = max(m.spec[ep][k], expires)
	}
}

func (m *model) holds(ep string, k Key) bool {
	for h, refs := range m.refs {
		if h.ep == ep && refs[k].total() > 0 {
			return true
		}
	}
	return false
}

func (m *model) expire() {
	for _, s := range m.spec {
		for k, exp := range s {
			if exp <= m.now {
				delete(s, k)
			}
		}
	}
}

func (m *model) lookup(keys []Key, ep string) Match {
	var out Match
	for _, k := range keys {
		best, held := 0.0, false
		for h, refs := range m.refs {
			if r := refs[k]; h.ep == ep && r.total() > 0 {
				held = true
				for med, n := range r {
					if n > 0 {
						best = max(best, DefaultWeights[med])
					}
				}
			}
		}
		exp, spec := m.spec[ep][k]
		switch {
		case held:
			out.Confirmed++
			out.Weighted += best
		case spec && m.now < exp:
			out.Speculative++
		default:
			return out
		}
	}
	return out
}

func (m *model) counts() (entries, specs int64) {
	for _, refs := range m.refs {
		entries += int64(len(refs))
	}
	for _, s := range m.spec {
		specs += int64(len(s))
	}
	return entries, specs
}

// opRunner applies a stream of operations, drawn from bytes, to an index and
// the model and compares them after each one.
type opRunner struct {
	t    testing.TB
	f    *fixture
	m    *model
	data []byte
	log  []string
}

var runnerEndpoints = []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"}

const runnerTTL = time.Second

func (r *opRunner) next(n int) int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return int(b) % n
}

func (r *opRunner) run() {
	for len(r.data) > 0 {
		r.f.ix.Sweep()
		r.m.expire()
		r.step()
		r.compare()
	}
}

func (r *opRunner) step() {
	ep, rank := runnerEndpoints[r.next(3)], r.next(2)
	switch r.next(6) {
	case 0:
		seed, from, n, med := r.next(4), r.next(6), 1+r.next(4), Medium(r.next(2))
		ev := Stored{Endpoint: ep, Rank: rank, Hashes: hashes(seed, from, n), Tokens: tokens(seed, from, n),
			BlockSize: testBS, Identity: testID, Medium: med}
		ev.Parent, ev.HasParent = engineHash(seed, from-1), from > 0
		r.logf("store %s/%d seq %d [%d,+%d) %s", ep, rank, seed, from, n, med)
		r.f.ix.Store(ev)
		r.m.store(ev)
	case 1:
		hs, med := hashes(r.next(4), r.next(10), 1), Medium(r.next(2))
		r.logf("remove %s/%d %x %s", ep, rank, hs, med)
		got, _ := r.f.ix.Remove(ep, rank, hs, med)
		if want := r.m.remove(ep, rank, hs, med); got != want {
			r.fail("Remove reported %d unknown, model %d", got, want)
		}
	case 2:
		r.logf("clear rank %s/%d", ep, rank)
		r.f.ix.ClearRank(ep, rank)
		r.m.clearRank(ep, rank)
	case 3:
		r.logf("clear endpoint %s", ep)
		r.f.ix.ClearEndpoint(ep)
		r.m.clearRank(ep, 0)
		r.m.clearRank(ep, 1)
		delete(r.m.spec, ep)
	case 4:
		keys := keysOf(r.t, r.next(4), 1+r.next(6))
		r.logf("speculate %s %d keys", ep, len(keys))
		r.f.ix.Speculate(ep, keys, DecisionID(r.next(256)), runnerTTL)
		r.m.speculate(ep, keys, r.m.now+int64(runnerTTL))
	case 5:
		d := time.Duration(r.next(256)) * 10 * time.Millisecond
		r.logf("advance %s", d)
		r.f.clock.Advance(d)
		r.m.now += int64(d)
	}
}

func (r *opRunner) compare() {
	for seed := range 4 {
		keys := keysOf(r.t, seed, 10)
		got := r.f.ix.Lookup(keys, runnerEndpoints, nil)
		for i, ep := range runnerEndpoints {
			if want := r.m.lookup(keys, ep); !matchEqual(got[i], want) {
				r.fail("seq %d on %s: index %+v, model %+v", seed, ep, got[i], want)
			}
		}
	}
	st := r.f.ix.Stats()
	if entries, specs := r.m.counts(); st.Entries != entries || st.Speculative != specs {
		r.fail("index has %d entries and %d predictions, model %d and %d", st.Entries, st.Speculative, entries, specs)
	}
	if st.Outcomes[Confirmed] != r.m.confirmed || st.Outcomes[EarlyExpiry] != 0 {
		r.fail("index confirmed %d predictions (%d early), model %d", st.Outcomes[Confirmed], st.Outcomes[EarlyExpiry], r.m.confirmed)
	}
}

func (r *opRunner) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *opRunner) fail(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("after ops:\n%v\n%s", r.log, fmt.Sprintf(format, args...))
}

func runOps(t testing.TB, data []byte) {
	f := newFixture(t, Options{Shards: 4})
	m := newModel()
	m.now = f.clock.Now().UnixNano()
	(&opRunner{t: t, f: f, m: m, data: data}).run()
}

// TestMatchesModel runs random operation sequences against the index and the
// reference model.
func TestMatchesModel(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			data := make([]byte, 600)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			runOps(t, data)
		})
	}
}
