package relay

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/events/wire"
)

// mirrorWant is a mirrored block's first token and extra keys.
type mirrorWant struct {
	tok   uint32
	extra []byte
}

// TestMirrorKeepsEngineIdentities applies payloads encoded by vLLM's and
// SGLang's own event classes (events/wire/testdata/engines) and checks the
// snapshot carries what a router keys each block under: the extra keys
// (salts, multimodal hashes) as the engine sent them, SGLang's cache_salt
// as vLLM's extra-keys entry for a root block, and only the full-attention
// group of a hybrid model (its sliding-window group repeats two of the
// hashes for other tokens and removes one of them).
func TestMirrorKeepsEngineIdentities(t *testing.T) {
	toks := func(from uint32) []uint32 {
		out := make([]uint32, 8)
		for i := range out {
			out[i] = from + uint32(i)
		}
		return out
	}
	tests := []struct {
		payload string
		// want is per block hash: its tokens' first id and its extra keys.
		want map[uint64]mirrorWant
	}{
		{"vllm_salted", map[uint64]mirrorWant{11: {100, wire.SaltExtraKey("", "tenant-a")}, 12: {108, nil}}},
		{"vllm_lora_salted", map[uint64]mirrorWant{21: {100, wire.SaltExtraKey("ad1", "tenant-b")}}},
		{"vllm_hybrid", map[uint64]mirrorWant{41: {100, nil}, 42: {108, nil}, 43: {116, nil}, 44: {124, nil}}},
		{"sglang_salted", map[uint64]mirrorWant{1<<64 - 5: {200, wire.SaltExtraKey("", "tenant-c")}, 6: {208, nil}}},
		{"sglang_eagle_bigram", map[uint64]mirrorWant{7: {200, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.payload, func(t *testing.T) {
			mr := mirrorOfEnginePayload(t, tt.payload)
			_, got := mirrored(t, mr, 1<<20)
			if len(got) != len(tt.want) {
				t.Fatalf("snapshot holds %v, want %d blocks", held(got), len(tt.want))
			}
			for _, blk := range got {
				w, ok := tt.want[blk.Hash]
				if !ok || blk.Media == 0 {
					t.Fatalf("snapshot holds %v", held(got))
				}
				if !slices.Equal(blk.Tokens, toks(w.tok)) {
					t.Errorf("block %d tokens %v, want from %d", blk.Hash, blk.Tokens, w.tok)
				}
				if !bytes.Equal(blk.Extra, w.extra) {
					t.Errorf("block %d extra keys %x, want %x", blk.Hash, blk.Extra, w.extra)
				}
			}
		})
	}
	t.Run("vllm_multimodal", func(t *testing.T) {
		mr := mirrorOfEnginePayload(t, "vllm_multimodal")
		_, got := mirrored(t, mr, 1<<20)
		var opaque []uint64
		for _, blk := range got {
			if _, o := wire.ScanExtraKey(blk.Extra, ""); o {
				opaque = append(opaque, blk.Hash)
			}
		}
		if !slices.Equal(opaque, []uint64{32, 33}) {
			t.Errorf("blocks with media extra keys in the snapshot: %v, want [32 33]", opaque)
		}
	})
}

// mirrorOfEnginePayload is a mirror that applied one of the payloads the
// engines' own event classes wrote (events/wire/testdata/engines).
func mirrorOfEnginePayload(t *testing.T, name string) *mirror {
	t.Helper()
	payload, err := os.ReadFile(filepath.Join("..", "wire", "testdata", "engines", name+".msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	var b wire.Batch
	if err := wire.DecodeBatch(payload, &b); err != nil {
		t.Fatal(err)
	}
	mr := newMirror(100, mustMetrics(t))
	mr.apply(0, &b)
	return mr
}
