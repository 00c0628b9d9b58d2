package fleet

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

type delivery struct {
	at time.Duration
	ev index.Stored
}

func testEngine(t *testing.T, lat Latency) (*loop, *engine, *[]delivery) {
	t.Helper()
	l := &loop{}
	var got []delivery
	cost := Cost{TTFT: 10 * time.Millisecond, PrefillPerToken: time.Millisecond, DecodePerToken: time.Millisecond,
		MaxRunning: 1, PrefillChunk: 32, NumBlocks: 1000, OutputTokens: 2}
	e := newEngine("e", l, cost, lat, Flowing, rand.New(rand.NewPCG(1, 2)), func(ev index.Stored) {
		got = append(got, delivery{l.now, ev})
	})
	return l, e, &got
}

func testJob(t *testing.T, tokens []uint32, silent bool, out *[2]time.Duration, cached *int) *job {
	t.Helper()
	keys, err := index.AppendKeys(nil, identity, BlockSize, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return &job{tokens: tokens, keys: keys, silent: silent, firstToken: func() {},
		done: func(ttft time.Duration, c int) { out[0], *cached = ttft, c }}
}

// TestEngineChunkedPrefill checks the engine model: a 100-token prompt in
// 32-token chunks publishes each chunk's full blocks once the chunk is
// computed (plus the event latency), chained to the previous chunk, never
// the last token's block; TTFT is TTFT + prefill; a second request reuses
// the stored prefix; a silent one stores and publishes nothing.
func TestEngineChunkedPrefill(t *testing.T) {
	l, e, got := testEngine(t, Latency{Delay: 50 * time.Millisecond})
	tokens := randomTokens(rand.New(rand.NewPCG(1, 1)), 100)
	var ttft [2]time.Duration
	var cached int
	e.submit(testJob(t, tokens, false, &ttft, &cached))
	l.run(time.Hour)
	// Chunks end at 10ms+32ms, +32ms, +32ms, +4ms; full cacheable blocks: 99/16 = 6.
	wantAt := []time.Duration{42 * time.Millisecond, 74 * time.Millisecond, 106 * time.Millisecond}
	wantBlocks := []int{2, 2, 2}
	if len(*got) != len(wantAt) {
		t.Fatalf("%d batches, want %d: %+v", len(*got), len(wantAt), *got)
	}
	for i, d := range *got {
		if d.at != wantAt[i]+50*time.Millisecond || len(d.ev.Hashes) != wantBlocks[i] || len(d.ev.Tokens) != wantBlocks[i]*BlockSize {
			t.Errorf("batch %d at %v with %d blocks, want %v and %d", i, d.at, len(d.ev.Hashes), wantAt[i]+50*time.Millisecond, wantBlocks[i])
		}
		if d.ev.HasParent != (i > 0) {
			t.Errorf("batch %d: HasParent %v", i, d.ev.HasParent)
		}
		if i > 0 && d.ev.Parent != (*got)[i-1].ev.Hashes[1] {
			t.Errorf("batch %d does not chain to batch %d", i, i-1)
		}
	}
	if ttft[0] != 110*time.Millisecond || cached != 0 {
		t.Errorf("first request: TTFT %v, cached %d; want 110ms, 0", ttft[0], cached)
	}
	*got = nil
	e.submit(testJob(t, append(tokens[:96:96], 7, 8, 9, 10), false, &ttft, &cached))
	l.run(time.Hour)
	if cached != 96 || ttft[0] != 14*time.Millisecond {
		t.Errorf("second request: cached %d, TTFT %v; want 96 (six blocks), 14ms", cached, ttft[0])
	}
	*got = nil
	silent := randomTokens(rand.New(rand.NewPCG(2, 2)), 100)
	e.submit(testJob(t, silent, true, &ttft, &cached))
	l.run(time.Hour)
	keys, _ := index.AppendKeys(nil, identity, BlockSize, silent)
	if len(*got) != 0 || e.cachedBlocks(keys) != 0 {
		t.Errorf("silent request published %d batches and cached %d blocks, want none", len(*got), e.cachedBlocks(keys))
	}
}

// TestEngineKeepsEventOrder checks that jittered batches reach the router in
// the order the engine published them.
func TestEngineKeepsEventOrder(t *testing.T) {
	l, e, got := testEngine(t, Latency{Delay: 10 * time.Millisecond, Jitter: time.Second})
	var ttft [2]time.Duration
	var cached int
	rng := rand.New(rand.NewPCG(3, 3))
	for range 20 {
		e.submit(testJob(t, randomTokens(rng, 200), false, &ttft, &cached))
	}
	l.run(time.Hour)
	if len(*got) < 20 {
		t.Fatalf("%d batches", len(*got))
	}
	for i := 1; i < len(*got); i++ {
		if (*got)[i].at < (*got)[i-1].at {
			t.Fatalf("batch %d delivered at %v before batch %d at %v", i, (*got)[i].at, i-1, (*got)[i-1].at)
		}
	}
}

// TestEngineQueues checks the slot bound: with one slot, a second request
// waits for the first to finish, and the wait is part of its TTFT.
func TestEngineQueues(t *testing.T) {
	l, e, _ := testEngine(t, Latency{})
	var a, b [2]time.Duration
	var ca, cb int
	rng := rand.New(rand.NewPCG(4, 4))
	e.submit(testJob(t, randomTokens(rng, 40), false, &a, &ca))
	e.submit(testJob(t, randomTokens(rng, 40), false, &b, &cb))
	if e.load() != 2 || e.running != 1 {
		t.Fatalf("load %d running %d, want 2 and 1", e.load(), e.running)
	}
	l.run(time.Hour)
	// Each: 10ms TTFT + 40ms prefill; the first decodes 1 more token (1ms).
	if a[0] != 50*time.Millisecond || b[0] != 101*time.Millisecond {
		t.Errorf("TTFTs %v, %v; want 50ms, 101ms", a[0], b[0])
	}
}
