package wire

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestEnginePayloads decodes payloads encoded by vLLM 0.33.0's and SGLang
// 0.5.23's own event classes (testdata/engines/gen.py loads them from the
// wheels) and checks every identity they carry.
func TestEnginePayloads(t *testing.T) {
	tests := []struct {
		name  string
		check func(t *testing.T, b *Batch)
	}{
		{"vllm_salted", func(t *testing.T, b *Batch) {
			ev := only(t, b, 0)
			want(t, "salt", ev.Salt(), "tenant-a")
			want(t, "opaque", ev.Opaque(0) || ev.Opaque(1), false)
			want(t, "spec kind", ev.SpecKind, "full_attention")
		}},
		{"vllm_lora_salted", func(t *testing.T, b *Batch) {
			ev := only(t, b, 0)
			want(t, "salt", ev.Salt(), "tenant-b")
			want(t, "lora", ev.LoRAName, "ad1")
		}},
		{"vllm_multimodal", func(t *testing.T, b *Batch) {
			ev := only(t, b, 0)
			got := []bool{ev.Opaque(0), ev.Opaque(1), ev.Opaque(2), ev.Opaque(3)}
			want(t, "opaque blocks", slices.Equal(got, []bool{false, true, true, false}), true)
			want(t, "salt", ev.Salt(), "")
		}},
		{"vllm_hybrid", func(t *testing.T, b *Batch) {
			want(t, "events", len(b.Events), 3)
			swa := b.Events[1]
			want(t, "swa kind", swa.SpecKind, "sliding_window")
			want(t, "swa window", swa.SlidingWindow, 16)
			want(t, "swa hashes vs tokens", len(swa.BlockHashes) < len(swa.TokenIDs)/8, true)
			want(t, "removed group", b.Events[2].GroupIdx, 1)
		}},
		{"vllm_lookahead", func(t *testing.T, b *Batch) {
			ev := only(t, b, 0)
			want(t, "lookahead lists", len(ev.Lookahead), 2)
			want(t, "lookahead of block 0", slices.Equal(ev.Lookahead[0], []uint32{108}), true)
			want(t, "lookahead of block 1", slices.Equal(ev.Lookahead[1], []uint32{116}), true)
		}},
		{"sglang_salted", func(t *testing.T, b *Batch) {
			ev := only(t, b, 0)
			want(t, "salt", ev.Salt(), "tenant-c")
			want(t, "negative hash", ev.BlockHashes[0], uint64(1<<64-5))
		}},
		{"sglang_eagle_bigram", func(t *testing.T, b *Batch) {
			ev := only(t, b, 0)
			want(t, "bigram", ev.Bigram, true)
			want(t, "tokens", slices.Equal(ev.TokenIDs, toks(200, 8)), true)
		}},
		{"sglang_media", func(t *testing.T, b *Batch) {
			var media []string
			for _, ev := range b.Events {
				media = append(media, ev.Medium)
			}
			want(t, "media", slices.Equal(media, []string{"GPU", "CPU_PINNED", "DISK", "EXTERNAL", "CPU_PINNED"}), true)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join("testdata", "engines", tt.name+".msgpack"))
			if err != nil {
				t.Fatal(err)
			}
			var b Batch
			if err := DecodeBatch(payload, &b); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			tt.check(t, &b)
		})
	}
}

func only(t *testing.T, b *Batch, i int) *Event {
	t.Helper()
	if len(b.Events) != 1 {
		t.Fatalf("got %d events, want 1", len(b.Events))
	}
	return &b.Events[i]
}

func want[T comparable](t *testing.T, what string, got, w T) {
	t.Helper()
	if got != w {
		t.Errorf("%s = %v, want %v", what, got, w)
	}
}
