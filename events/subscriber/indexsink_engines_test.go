package subscriber_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

// TestIndexSinkEngineIdentities applies payloads encoded by vLLM's and
// SGLang's own event classes (events/wire/testdata/engines) and checks what
// a request of each identity matches: salts isolate, image blocks never
// match their placeholder text, a hybrid model's sliding-window group
// neither misaligns nor removes the full-attention group's blocks, and EAGLE
// bigram batches key like plain ones; the same after a snapshot sync from
// the relay's mirror of those batches.
func TestIndexSinkEngineIdentities(t *testing.T) {
	base := index.Identity{Model: testModel}
	salted := func(s string) index.Identity { return index.Identity{Model: testModel, CacheSalt: s} }
	tests := []struct {
		payload   string
		id        index.Identity
		from      uint32 // the request's tokens are from, from+1, ...
		blocks    int
		wantMatch int
	}{
		{"vllm_salted", salted("tenant-a"), 100, 2, 2},
		{"vllm_salted", base, 100, 2, 0},
		{"vllm_salted", salted("tenant-x"), 100, 2, 0},
		{"vllm_lora_salted", index.Identity{Model: testModel, LoRA: "ad1", CacheSalt: "tenant-b"}, 100, 1, 1},
		{"vllm_lora_salted", index.Identity{Model: testModel, LoRA: "ad1"}, 100, 1, 0},
		{"vllm_multimodal", base, 100, 4, 1},
		{"vllm_hybrid", base, 100, 4, 4},
		{"vllm_lookahead", base, 100, 2, 2},
		{"sglang_salted", salted("tenant-c"), 200, 2, 2},
		{"sglang_salted", base, 200, 2, 0},
		{"sglang_eagle_bigram", base, 200, 1, 1},
	}
	for _, tt := range tests {
		for _, viaSnapshot := range []bool{false, true} {
			name := tt.payload + "/" + tt.id.LoRA + tt.id.CacheSalt
			if viaSnapshot {
				name += "/snapshot"
			}
			t.Run(name, func(t *testing.T) {
				payload, err := os.ReadFile(filepath.Join("..", "wire", "testdata", "engines", tt.payload+".msgpack"))
				if err != nil {
					t.Fatal(err)
				}
				var b wire.Batch
				if err := wire.DecodeBatch(payload, &b); err != nil {
					t.Fatal(err)
				}
				ix, m, reg := indexWithMetrics(t, index.Options{BlockSize: 8})
				sink := subscriber.NewIndexSink(ix, m)
				src := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
				if viaSnapshot {
					rb := sink.Rebuilder(src)
					rb.AddChunk(relaySnapshot(&b))
					if _, err := rb.Commit(); err != nil {
						t.Fatal(err)
					}
				} else {
					sink.ApplyBatch(src, &b)
				}
				toks := make([]uint32, 8*tt.blocks)
				for i := range toks {
					toks[i] = tt.from + uint32(i)
				}
				keys, err := index.AppendKeys(nil, tt.id, 8, toks)
				if err != nil {
					t.Fatal(err)
				}
				if got := ix.Lookup(keys, []string{sinkEndpoint}, nil)[0].Blocks(); got != tt.wantMatch {
					t.Errorf("matched %d blocks, want %d", got, tt.wantMatch)
				}
				if st := ix.Stats(); st.LengthMismatch != 0 {
					t.Errorf("index saw %d events whose hashes and token blocks disagree", st.LengthMismatch)
				}
				if tt.payload == "vllm_hybrid" && !viaSnapshot {
					for kind, want := range map[string]float64{"BlockStored": 1, "BlockRemoved": 1} {
						if got := sparseCount(t, reg, kind); got != want {
							t.Errorf("sink_events_total{kind=%s,result=sparse_group} = %v, want %v", kind, got, want)
						}
					}
				}
			})
		}
	}
}

// relaySnapshot is the snapshot chunk a relay's mirror sends after
// applying b (events/relay's TestMirrorKeepsEngineIdentities checks the
// mirror against the same payloads): full-attention blocks only, each with
// the engine's raw extra keys, SGLang's cache_salt as vLLM's extra-keys
// entry of a chain's first block.
func relaySnapshot(b *wire.Batch) *snapshot.Chunk {
	c := &snapshot.Chunk{Header: snapshot.Header{Last: true, Media: []string{"GPU"}, LoRAs: []string{""}}}
	for _, ev := range b.Events {
		if ev.Kind != wire.KindBlockStored || !wire.FullAttention(ev.SpecKind) {
			continue
		}
		lora := uint16(0)
		if ev.LoRAName != "" {
			c.Header.LoRAs = append(c.Header.LoRAs, ev.LoRAName)
			lora = uint16(len(c.Header.LoRAs) - 1)
		}
		parent, hasParent := ev.ParentHash, ev.HasParent
		for i, h := range ev.BlockHashes {
			blk := snapshot.Block{Hash: h, Parent: parent, HasParent: hasParent, Media: 1, LoRA: lora,
				Tokens: ev.TokenIDs[i*ev.BlockSize : (i+1)*ev.BlockSize]}
			if i < len(ev.ExtraKeys) {
				blk.Extra = ev.ExtraKeys[i]
			} else if i == 0 && !hasParent && ev.CacheSalt != "" {
				blk.Extra = wire.SaltExtraKey(ev.LoRAName, ev.CacheSalt)
			}
			c.Blocks = append(c.Blocks, blk)
			parent, hasParent = h, true
		}
	}
	c.Header.Total = uint32(len(c.Blocks))
	return c
}

// sparseCount reads sink_events_total{kind, result="sparse_group"}.
func sparseCount(t *testing.T, reg *prometheus.Registry, kind string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "warmroute_events_sink_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["result"] == "sparse_group" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
