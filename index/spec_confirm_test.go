package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/internal/benchcpu"
)

// confirmByFindEnd is specTable.confirm written straightforwardly (find the
// prediction, then end it, which probes the key's heads slot again): the
// reference for confirm's single-probe path.
func confirmByFindEnd(t *specTable, key Key, ep uint32, now int64, out *pending) {
	if t.n == 0 {
		return
	}
	at, prev := t.find(key, ep)
	if at == 0 {
		return
	}
	kind := Confirmed
	if now >= t.at(at).expires {
		kind = EarlyExpiry
	}
	t.end(key, at, prev, kind, now, out)
}

// specState is everything a specTable's later behaviour depends on: each
// key's prediction list in order (slot index and entry), the free list, the
// slab size, the count and the expiry queue.
func specState(t *specTable) string {
	var keys []Key
	t.heads.all(func(k Key, _ uint32) { keys = append(keys, k) })
	slices.Sort(keys)
	s := fmt.Sprintf("n=%d heads=%d size=%d queue=%d\n", t.n, t.heads.len(), t.size, t.queue.len())
	for _, k := range keys {
		s += fmt.Sprintf("%x:", uint64(k))
		for i := t.heads.head(k); i != 0; i = t.at(i).next {
			s += fmt.Sprintf(" %d%+v", i, *t.at(i))
		}
		s += "\n"
	}
	for i := t.free; i != 0; i = t.at(i).next {
		s += fmt.Sprintf("free %d ", i)
	}
	return s
}

// runConfirmOps applies one operation stream to a specTable confirmed by
// confirm and to one confirmed by confirmByFindEnd, and fails at the first
// difference in outcomes or state. Keys share few home slots (so removal
// shifts runs back) and predictions share keys across endpoints (so a
// confirmation unlinks first, middle and last list entries).
func runConfirmOps(t *testing.T, data []byte) {
	var fast, ref specTable
	now := int64(1000)
	for len(data) >= 3 {
		op, a, b := data[0], data[1], data[2]
		data = data[3:]
		// Keys differ in the part bits (32-35) and collide in the low
		// bits, so several keys probe the same run of a part.
		key := Key(uint64(a&7)<<32 | uint64(a>>3&3)<<8 | uint64(a>>5))
		ep := uint32(b & 3)
		var fo, ro pending
		switch op % 4 {
		case 0, 1: // predict, sometimes already expired
			d := DecisionID(b >> 2)
			exp := now + int64(b>>4) - 4
			remote := op&8 != 0
			if fast.insert(key, ep, d, now, exp, remote) != ref.insert(key, ep, d, now, exp, remote) {
				t.Fatalf("insert %x on %d: created differs", uint64(key), ep)
			}
		case 2:
			fast.confirm(key, ep, now, &fo)
			confirmByFindEnd(&ref, key, ep, now, &ro)
		case 3:
			now += int64(b & 7)
			fast.expire(now, 2, int(a%8)+1, &fo)
			ref.expire(now, 2, int(a%8)+1, &ro)
		}
		if !slices.Equal(fo, ro) {
			t.Fatalf("outcomes differ: confirm %+v, find+end %+v", fo, ro)
		}
		if f, r := specState(&fast), specState(&ref); f != r {
			t.Fatalf("state differs after op %d:\nconfirm:\n%s\nfind+end:\n%s", op%4, f, r)
		}
	}
}

// TestConfirmMatchesFindEnd checks the single-probe confirmation against
// finding and ending the prediction: the same outcomes (kind, decision,
// blocks, latency) and the same table afterwards, so Lookup and every later
// ending see the same predictions.
func TestConfirmMatchesFindEnd(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 0xc0f))
		data := make([]byte, 3*400)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runConfirmOps(t, data) })
	}
}

// FuzzConfirm is TestConfirmMatchesFindEnd over arbitrary operation streams.
func FuzzConfirm(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 0})
	f.Add([]byte{0, 1, 0, 0, 1, 1, 0, 9, 2, 2, 1, 1, 2, 1, 0, 2, 9, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 3000 {
			data = data[:3000]
		}
		runConfirmOps(t, data)
	})
}

// BenchmarkConfirm measures ending predictions by confirmation, one per key
// as a store's blocks do, single-probe (confirm) against find+end: each op
// predicts 16 keys for one endpoint of a shard-sized table (1,024 keys
// predicted, so removals shift runs as in a live shard) and confirms them.
func BenchmarkConfirm(b *testing.B) {
	const live, perOp = 1024, 16
	for _, c := range []struct {
		name    string
		confirm func(*specTable, Key, uint32, int64, *pending)
	}{{"single-probe", (*specTable).confirm}, {"find+end", confirmByFindEnd}} {
		b.Run(c.name, func(b *testing.B) {
			var t specTable
			rng := rand.New(rand.NewPCG(1, 2))
			keys := make([]Key, live)
			for i := range keys {
				keys[i] = Key(rng.Uint64())
				t.insert(keys[i], 1, 0, 0, 1<<62, false)
			}
			out := make(pending, 0, perOp)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := benchcpu.Start()
			for i := range b.N {
				base := i * perOp % live
				for j := range perOp {
					k := keys[base+j]
					c.confirm(&t, k, 1, 1, &out)
					t.insert(k, 1, DecisionID(i), 1, 1<<62, false)
				}
				out = out[:0]
				for t.queue.len() > 0 { // keeps the queue from growing without bound
					t.queue.pop()
				}
			}
			b.ReportMetric(float64(cpu.Elapsed().Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
