package subscriber

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/benchcpu"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

const (
	ingestModel     = "m"
	ingestEndpoints = 8
	ingestBS        = 16
)

// ingestPerBatch is how many blocks each message stores (and removes): 16,
// as a vLLM step of 256 new tokens, unless WARMROUTE_BENCH_BLOCKS sets
// another count (a long prompt's prefill step stores hundreds; with
// WARMROUTE_BENCH_CHAINS=512 and 512 blocks the index keeps the default's
// 131k blocks).
var ingestPerBatch = func() int {
	if n, err := strconv.Atoi(os.Getenv("WARMROUTE_BENCH_BLOCKS")); err == nil && n >= 1 && n < 1<<20 {
		return n
	}
	return 16
}()

// ingestChains is how many distinct stored chains the benchmark cycles
// through; half of them are resident at any time. WARMROUTE_BENCH_CHAINS
// raises it (a larger resident index costs more cache misses per block).
func ingestChains() int {
	if n, err := strconv.Atoi(os.Getenv("WARMROUTE_BENCH_CHAINS")); err == nil && n >= 16 {
		return n / 16 * 16
	}
	return 16384
}

// ingestShape is how a BenchmarkIngest message carries its blocks.
type ingestShape int

const (
	// shapeSteady: a BlockStored, then one BlockRemoved of all the
	// removed hashes.
	shapeSteady ingestShape = iota
	// shapeGrow: the BlockStored alone.
	shapeGrow
	// shapeVLLM: what vLLM 0.33 publishes for a step that evicted to make
	// room: one BlockRemoved per evicted block (its block pool reports each
	// eviction as a one-hash event), then the BlockStored, every event a
	// msgpack map with vLLM's keys in its order (ingestVLLMEvents), not the
	// legacy tagged array.
	shapeVLLM
)

// ingestPayload is message c of the cycle, in vLLM's wire form (msgspec
// array_like events after the tag, every integer in its smallest msgpack
// form, as msgspec writes it): a BlockStored of chain c (16 blocks of 16
// token ids, chained to the previous chain of the same endpoint) and,
// unless shape is shapeGrow, the removal of the chain stored half a cycle
// earlier, so the index holds a constant half of the chains: the steady
// state of an engine whose cache is full.
func ingestPayload(c, chains int, shape ingestShape) []byte {
	hashes := func(chain int) []uint64 {
		hs := make([]uint64, ingestPerBatch)
		for i := range hs {
			hs[i] = uint64(chain)<<20 | uint64(i) | 1<<63
		}
		return hs
	}
	toks := ingestTokens(c)
	var parent any
	if prev, ok := ingestParent(c); ok {
		parent = hashes(prev)[ingestPerBatch-1] // a conversation's next turn
	}
	old := c - chains/2
	if old < 0 {
		old += chains
	}
	if shape == shapeVLLM {
		return marshalVLLM(hashes(c), parent, toks, hashes(old))
	}
	events := []any{[]any{"BlockStored", hashes(c), parent, toks, ingestBS, nil, "GPU", nil, nil}}
	if shape == shapeSteady {
		events = append(events, []any{"BlockRemoved", hashes(old), "GPU"})
	}
	return marshalCompact([]any{1.7e9, events, 0})
}

// vllmStoredKeys and vllmRemovedKeys are the keys vLLM 0.33's event
// classes write, in their order (TestIngestVLLMShape checks them against a
// payload its own classes built).
var (
	vllmStoredKeys = []string{"type", "block_hashes", "parent_block_hash", "token_ids", "block_size",
		"lora_id", "medium", "lora_name", "group_idx", "kv_cache_spec_kind"}
	vllmRemovedKeys = []string{"type", "block_hashes", "medium", "group_idx"}
)

// marshalVLLM encodes a vLLM 0.33 batch: a one-hash BlockRemoved map per
// removed hash, then the BlockStored map, integers in their smallest form.
func marshalVLLM(stored []uint64, parent any, toks []uint32, removed []uint64) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(enc.EncodeArrayLen(3))
	must(enc.EncodeFloat64(1.7e9))
	must(enc.EncodeArrayLen(len(removed) + 1))
	for _, h := range removed {
		must(enc.EncodeMapLen(len(vllmRemovedKeys)))
		for _, kv := range [][2]any{{"type", "BlockRemoved"}, {"block_hashes", []uint64{h}}, {"medium", "GPU"}, {"group_idx", 0}} {
			must(enc.Encode(kv[0]))
			must(enc.Encode(kv[1]))
		}
	}
	must(enc.EncodeMapLen(len(vllmStoredKeys)))
	for _, kv := range [][2]any{{"type", "BlockStored"}, {"block_hashes", stored}, {"parent_block_hash", parent},
		{"token_ids", toks}, {"block_size", ingestBS}, {"lora_id", nil}, {"medium", "GPU"}, {"lora_name", nil},
		{"group_idx", 0}, {"kv_cache_spec_kind", "full_attention"}} {
		must(enc.Encode(kv[0]))
		must(enc.Encode(kv[1]))
	}
	must(enc.EncodeInt(0))
	return buf.Bytes()
}

// marshalCompact encodes v as msgspec does: integers in their smallest
// form (a token id under 128 in one byte, under 65,536 in three), where
// msgpack's Marshal writes a uint32 in five bytes whatever its value.
func marshalCompact(v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// proseIDs are the Qwen 3 token ids of the tokenizer golden corpus's long
// English documents (3,214 ids: about three quarters take three bytes on
// the wire, a quarter one), which ingestTokens draws from so that the
// decoder meets the mix of integer widths a real prompt's event carries.
var proseIDs = sync.OnceValue(func() []uint32 {
	g, err := tokenizertest.ReadGolden()
	if err != nil {
		panic(err)
	}
	var ids []uint32
	for i, t := range g.Texts {
		if len(t) > 2000 {
			ids = append(ids, g.Families["qwen3"].Plain[i]...)
		}
	}
	if len(ids) < 1000 {
		panic(fmt.Sprintf("golden corpus: %d Qwen 3 ids of long documents", len(ids)))
	}
	return ids
})

// ingestTokens are chain c's token ids: a stride through proseIDs, so that
// chains differ (the corpus's length is prime to the strides) while each id
// is one a real prompt holds.
func ingestTokens(c int) []uint32 {
	ids := proseIDs()
	toks := make([]uint32, ingestPerBatch*ingestBS)
	for i := range toks {
		toks[i] = ids[(c*7919+i*104729)%len(ids)]
	}
	return toks
}

// ingestParent is the chain that chain c continues, if any.
func ingestParent(c int) (int, bool) {
	prev := c - ingestEndpoints
	return prev, prev >= 0 && (c/ingestEndpoints)%64 != 0
}

// ingestKeys are every chain's block keys, as the router computes them for
// a prompt holding the chain's conversation.
func ingestKeys(chains int) [][]index.Key {
	keys := make([][]index.Key, chains)
	for c := range keys {
		parent := index.Identity{Model: ingestModel}.Root()
		if prev, ok := ingestParent(c); ok {
			parent = keys[prev][ingestPerBatch-1]
		}
		var err error
		if keys[c], err = index.AppendChain(nil, parent, ingestBS, ingestTokens(c)); err != nil {
			panic(err)
		}
	}
	return keys
}

// BenchmarkIngest measures the router's production ingestion path without
// the network: a NATS message as nats.go hands it over (subject, relay
// headers, msgpack body) through the subscriber's header checks, sequence
// tracking, decoding and metrics into a real index (keying, reverse table,
// confirmations). Each message stores 16 blocks and removes 16, with half of
// the cycle's chains resident, so after the first cycle (run before timing)
// the index neither grows nor shrinks. It reports blocks stored per CPU-second (process CPU)
// and allocations per block; /vllm is /steady in the shape vLLM 0.33 sends
// (map events, 16 one-hash BlockRemoved events before the BlockStored; see
// shapeVLLM), the production path's message, and /vllm-confirm that shape
// with /confirm's predictions; /grow stores without removing (index growing);
// /confirm is /steady with every stored block predicted for its endpoint
// beforehand (the router routed the prompt there), so each store confirms
// 16 predictions: the predictions are made outside the timing, ingestConfirmAhead
// messages at a time. /withdrawn is /confirm's control: the same untimed
// predictions, each withdrawn as soon as it is made, so the stores find none
// to confirm; /confirm minus /withdrawn is what confirming costs, apart from
// what making the predictions leaves in the caches.
func BenchmarkIngest(b *testing.B) {
	b.Run("steady", func(b *testing.B) { benchIngest(b, shapeSteady, predictNone) })
	b.Run("vllm", func(b *testing.B) { benchIngest(b, shapeVLLM, predictNone) })
	b.Run("grow", func(b *testing.B) { benchIngest(b, shapeGrow, predictNone) })
	b.Run("confirm", func(b *testing.B) { benchIngest(b, shapeSteady, predictConfirm) })
	b.Run("vllm-confirm", func(b *testing.B) { benchIngest(b, shapeVLLM, predictConfirm) })
	b.Run("withdrawn", func(b *testing.B) { benchIngest(b, shapeSteady, predictWithdrawn) })
}

// predictMode is what BenchmarkIngest predicts before each run of messages.
type predictMode int

const (
	predictNone      predictMode = iota
	predictConfirm               // every stored block, for its endpoint
	predictWithdrawn             // the same, each prediction withdrawn at once
)

// ingestConfirmAhead is how many messages /confirm predicts per untimed
// pause, at most: a pause predicts no further than half a cycle of chains
// (benchIngest), since a chain predicted further ahead would still be
// stored from the cycle before, and Speculate skips a held key.
const ingestConfirmAhead = 512

// newIngestRig builds BenchmarkIngest's subscriber and index for chains
// chains of messages in shape, and returns feed, which hands message i
// (i < messages) to the subscriber as nats.go would.
func newIngestRig(tb testing.TB, chains int, shape ingestShape, messages int) (*index.Index, []string, func(i int)) {
	eps := make([]string, ingestEndpoints)
	for i := range eps {
		eps[i] = fmt.Sprintf("10.9.0.%d:8000", i+1)
	}
	ix, err := index.New(index.Options{BlockSize: ingestBS, Shards: benchShards()})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(Config{}, Follow{Models: []string{ingestModel}, Endpoints: map[string][]string{ingestModel: eps}},
		&nats.Conn{}, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	s.sink = NewIndexSink(ix, nil)
	payloads := make([][]byte, chains)
	for c := range payloads {
		payloads[c] = ingestPayload(c, chains, shape)
	}
	msgs := make([]nats.Msg, ingestEndpoints)
	for i, ep := range eps {
		subj, err := api.EventSubject(ingestModel, ep)
		if err != nil {
			tb.Fatal(err)
		}
		msgs[i] = nats.Msg{Subject: subj, Header: nats.Header{api.EventKindHeader: {api.EventKindBatch},
			api.EventSeqHeader: {"0"}, api.EventDPRankHeader: {"0"}, api.EventRelayHeader: {"r1"},
			api.EventEndpointHeader: {ep}}}
	}
	// Sequence headers are made before timing: nats.go parses a fresh
	// header per message, which is the client library's cost, not the
	// router's.
	seqs := make([][]string, 0, messages/ingestEndpoints+2)
	for i := range messages/ingestEndpoints + 2 {
		seqs = append(seqs, []string{strconv.Itoa(i)})
	}
	// nats.go copies every payload out of its read buffer into the Msg it
	// delivers (processMsg), so the subscriber decodes bytes just written:
	// feed copies each payload into one receive buffer (nothing keeps a
	// message's Data past handle here: there is no sync to hold it for),
	// and that copy, the client's work, is counted with the router's. The
	// payloads themselves (about 16 MB at the default 16,384 chains) are read cold.
	recv := make([]byte, 0, 2*len(payloads[0]))
	feed := func(i int) {
		m := &msgs[i%ingestEndpoints]
		m.Header[api.EventSeqHeader] = seqs[i/ingestEndpoints]
		recv = append(recv[:0], payloads[i%chains]...)
		m.Data = recv
		s.handle(inbound{msg: m, at: time.Time{}})
	}
	return ix, eps, feed
}

func benchIngest(b *testing.B, shape ingestShape, mode predictMode) {
	confirm := mode != predictNone
	chains := ingestChains()
	warm := 0
	if shape != shapeGrow {
		warm = chains // one cycle: the index and the pools reach their size
	}
	ix, eps, feed := newIngestRig(b, chains, shape, warm+b.N)
	for i := range warm {
		feed(i)
	}
	var keys [][]index.Key
	if confirm {
		keys = ingestKeys(chains)
	}
	predict := func(from, to int) {
		for i := from; i < to; i++ {
			if _, err := ix.Speculate(eps[i%ingestEndpoints], keys[i%chains], index.DecisionID(i+1), time.Hour); err != nil {
				b.Fatal(err)
			}
			if mode == predictWithdrawn {
				ix.Withdraw(eps[i%ingestEndpoints], keys[i%chains], index.DecisionID(i+1))
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	for base := warm; base < warm+b.N; {
		end := warm + b.N
		if confirm {
			end = min(end, base+min(ingestConfirmAhead, chains/2))
			b.StopTimer()
			predict(base, end)
			b.StartTimer()
		}
		cpu := benchcpu.Start()
		for i := base; i < end; i++ {
			feed(i)
		}
		elapsed += cpu.Elapsed()
		base = end
	}
	b.StopTimer()
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "cpu-ns/op")
	st := ix.Stats()
	if want := int64((warm + b.N) * ingestPerBatch); st.StoredBlocks != want {
		b.Fatalf("stored %d blocks, want %d", st.StoredBlocks, want)
	}
	want := int64(b.N * ingestPerBatch)
	if mode != predictConfirm {
		want = 0
	}
	if confirmed := st.Outcomes[index.Confirmed]; confirmed != want {
		b.Fatalf("confirmed %d predictions, want %d", confirmed, want)
	}
	if withdrawn := st.Withdrawn; mode == predictWithdrawn && withdrawn != int64(b.N*ingestPerBatch) {
		b.Fatalf("withdrew %d predictions, want %d", withdrawn, b.N*ingestPerBatch)
	}
	b.ReportMetric(float64(b.N*ingestPerBatch)/elapsed.Seconds(), "blocks/cpu-s")
	b.ReportMetric(float64(ingestPerBatch), "blocks/op")
}

// TestIngestSteadyAllocatesNothing pins the production path's allocation
// count: once the index and the pools have their size, a message (decode,
// header checks, metrics, 16 stores and 16 removals) allocates nothing.
func TestIngestSteadyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	const chains, runs = 512, 400
	for _, shape := range []ingestShape{shapeSteady, shapeVLLM} {
		ix, _, feed := newIngestRig(t, chains, shape, 2*chains+runs+1)
		next := 0
		for ; next < 2*chains; next++ {
			feed(next)
		}
		if got := testing.AllocsPerRun(runs, func() { feed(next); next++ }); got != 0 {
			t.Errorf("shape %d: %v allocations per steady message, want 0", shape, got)
		}
		if want := int64(next * ingestPerBatch); ix.Stats().StoredBlocks != want {
			t.Errorf("shape %d: stored %d blocks, want %d", shape, ix.Stats().StoredBlocks, want)
		}
	}
}

// benchShards is the index's shard count, WARMROUTE_BENCH_SHARDS or (0) the
// default: one thread applies fewer lock rounds with fewer shards, and
// index.BenchmarkContention measures what that costs decisions.
func benchShards() int {
	n, _ := strconv.Atoi(os.Getenv("WARMROUTE_BENCH_SHARDS"))
	return n
}

// TestIngestVLLMShape checks that /vllm's messages are what vLLM 0.33's own
// event classes write: each kind's keys, in order, as in the checked-in
// payload built with them (events/wire/testdata/engines), and that the
// payload decodes into the blocks it names.
func TestIngestVLLMShape(t *testing.T) {
	real, err := os.ReadFile(filepath.Join("..", "wire", "testdata", "engines", "vllm_hybrid.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	engine, ours := eventKeys(t, real), eventKeys(t, ingestPayload(20, 64, shapeVLLM))
	for _, kind := range []string{"BlockStored", "BlockRemoved"} {
		if !slices.Equal(engine[kind], ours[kind]) {
			t.Errorf("%s keys: vLLM writes %q, the benchmark %q", kind, engine[kind], ours[kind])
		}
	}
	var b wire.Batch
	if err := wire.DecodeBatch(ingestPayload(20, 64, shapeVLLM), &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != ingestPerBatch+1 {
		t.Fatalf("%d events, want %d removals and a store", len(b.Events), ingestPerBatch)
	}
	for i, ev := range b.Events[:ingestPerBatch] {
		if want := uint64(20+64/2)%64<<20 | uint64(i) | 1<<63; ev.Kind != wire.KindBlockRemoved || !slices.Equal(ev.BlockHashes, []uint64{want}) {
			t.Errorf("event %d: %v %x, want the removal of %x", i, ev.Kind, ev.BlockHashes, want)
		}
	}
	st := b.Events[ingestPerBatch]
	if st.Kind != wire.KindBlockStored || len(st.BlockHashes) != ingestPerBatch || !slices.Equal(st.TokenIDs, ingestTokens(20)) ||
		!st.HasParent || st.ParentHash != 12<<20|uint64(ingestPerBatch-1)|1<<63 {
		t.Errorf("stored event: %v, %d hashes, parent %x (%v)", st.Kind, len(st.BlockHashes), st.ParentHash, st.HasParent)
	}
}

// eventKeys returns, for each event type in a vLLM batch of map events, the
// keys of its first event in order.
func eventKeys(t *testing.T, payload []byte) map[string][]string {
	t.Helper()
	d := msgpack.NewDecoder(bytes.NewReader(payload))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.DecodeArrayLen()
	must(err)
	if n != 3 {
		t.Fatalf("batch of %d elements, want 3", n)
	}
	must(d.Skip())
	events, err := d.DecodeArrayLen()
	must(err)
	out := map[string][]string{}
	for range events {
		fields, err := d.DecodeMapLen()
		must(err)
		var keys []string
		kind := ""
		for range fields {
			k, err := d.DecodeString()
			must(err)
			keys = append(keys, k)
			if k == "type" {
				kind, err = d.DecodeString()
				must(err)
				continue
			}
			must(d.Skip())
		}
		if _, seen := out[kind]; !seen {
			out[kind] = keys
		}
	}
	return out
}
