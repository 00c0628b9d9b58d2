package wire

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
)

type decodeCase struct {
	name    string
	payload []byte
	want    Batch // arenas ignored; Events compared field by field
	wantErr bool
}

func ints(xs ...int) []uint32 {
	out := make([]uint32, len(xs))
	for i, x := range xs {
		out[i] = uint32(x)
	}
	return out
}

func toks(from, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(from + i)
	}
	return out
}

func decodeCases() []decodeCase {
	bin32 := make([]byte, 32)
	for i := range bin32 {
		bin32[i] = byte(i)
	}
	return slices.Concat(shapeCases(bin32), legacyCases(), errorCases())
}

func shapeCases(bin32 []byte) []decodeCase {
	return []decodeCase{
		{
			name:    "vllm array batch with map events",
			payload: pack(vllmBatch(storedMap(arr{uint64(11), uint64(12)}, nil, tokens(0, 4), 2))),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{11, 12}, TokenIDs: toks(0, 4), BlockSize: 2, Medium: "GPU"}}},
		},
		{
			name: "stored with parent, lora, extra keys and newer fields",
			payload: pack(vllmBatch(storedMap(arr{uint64(21)}, uint64(20), tokens(100, 2), 2,
				"lora_name", "ad1", "extra_keys", arr{arr{"salt"}}, "group_idx", 1,
				"kv_cache_spec_kind", "full_attention", "kv_cache_spec_sliding_window", nil,
				"locality", "LOCAL", "ownership", "OWNED", "session_id", "s1"))),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{21}, ParentHash: 20, HasParent: true, TokenIDs: toks(100, 2),
				BlockSize: 2, Medium: "GPU", LoRAName: "ad1", ExtraKeys: [][]byte{pack(arr{"salt"})},
				GroupIdx: 1, SpecKind: "full_attention", Locality: "LOCAL", Ownership: "OWNED", SessionID: "s1"}}},
		},
		{
			name: "hash encodings: max uint64, negative int64, bin32, short bin",
			payload: pack(vllmBatch(obj{"type", "BlockRemoved", "block_hashes",
				arr{u64w(math.MaxUint64), i64(-2), bin32, []byte{1, 2}}, "medium", nil})),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockRemoved,
				BlockHashes: []uint64{math.MaxUint64, math.MaxUint64 - 1, 0x18191a1b1c1d1e1f, 0x0102}}}},
		},
		{
			name:    "dp rank and all blocks cleared",
			payload: pack(arr{2.0, arr{obj{"type", "AllBlocksCleared"}}, 3}),
			want:    Batch{TS: 2, DPRank: 3, HasDPRank: true, Events: []Event{{Kind: KindAllBlocksCleared}}},
		},
		{
			name:    "nil dp rank",
			payload: pack(arr{f32(1.5), arr{}, nil}),
			want:    Batch{TS: 1.5, Events: []Event{}},
		},
		{
			name: "map batch with unknown keys",
			payload: pack(obj{"ts", 3, "extra", arr{1, obj{"x", 1}}, "data_parallel_rank", 1,
				"events", arr{obj{"type", "BlockRemoved", "block_hashes", arr{uint64(5)}, "future", true}}}),
			want: Batch{TS: 3, DPRank: 1, HasDPRank: true, Events: []Event{{Kind: KindBlockRemoved, BlockHashes: []uint64{5}}}},
		},
		{
			name:    "type key after fields",
			payload: pack(vllmBatch(obj{"block_hashes", arr{uint64(7)}, "medium", "CPU", "type", "BlockRemoved"})),
			want:    Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockRemoved, BlockHashes: []uint64{7}, Medium: "CPU"}}},
		},
		{
			name: "unknown tags skipped, map and array",
			payload: pack(vllmBatch(
				obj{"type", "BlockInactive", "block_hashes", arr{uint64(1), uint64(2)}},
				arr{"BlockTransferred", arr{uint64(3)}, "GPU"},
				obj{"type", "BlockRemoved", "block_hashes", arr{uint64(4)}})),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Skipped: 2,
				Events: []Event{{Kind: KindBlockRemoved, BlockHashes: []uint64{4}}}},
		},
	}
}

func legacyCases() []decodeCase {
	return []decodeCase{
		{
			name: "sglang two-element batch with legacy array events and signed hashes",
			payload: pack(arr{10.25, arr{
				arr{"BlockStored", arr{i64(-5), i64(6)}, i64(-4), tokens(1, 4), 2, nil},
				arr{"BlockRemoved", arr{i64(-5)}},
				arr{"AllBlocksCleared"}}}),
			want: Batch{TS: 10.25, Events: []Event{
				{Kind: KindBlockStored, BlockHashes: []uint64{math.MaxUint64 - 4, 6}, ParentHash: math.MaxUint64 - 3,
					HasParent: true, TokenIDs: toks(1, 4), BlockSize: 2},
				{Kind: KindBlockRemoved, BlockHashes: []uint64{math.MaxUint64 - 4}},
				{Kind: KindAllBlocksCleared}}},
		},
		{
			name: "legacy array with every field and some beyond",
			payload: pack(vllmBatch(arr{"BlockStored", arr{uint64(9)}, nil, tokens(7, 1), 1, 3, "STORAGE", "l",
				arr{nil}, 2, "sliding_window", 128, "REMOTE", "SHARED", "sid", arr{arr{8}}, "future1", arr{1}})),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{9}, TokenIDs: toks(7, 1), BlockSize: 1, LoRAID: 3, Medium: "STORAGE",
				LoRAName: "l", ExtraKeys: [][]byte{nil}, GroupIdx: 2, SpecKind: "sliding_window",
				SlidingWindow: 128, Locality: "REMOTE", Ownership: "SHARED", SessionID: "sid",
				Lookahead: [][]uint32{ints(8)}}}},
		},
		{
			name: "sglang map with cache salt and eagle bigram tokens",
			payload: pack(arr{2.5, arr{obj{"type", "BlockStored", "block_hashes", arr{i64(-1)}, "parent_block_hash", nil,
				"token_ids", arr{arr{5, 6}, arr{6, 7}}, "block_size", 2, "medium", "CPU_PINNED", "cache_salt", "s"}}, 0}),
			want: Batch{TS: 2.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{1<<64 - 1}, TokenIDs: ints(5, 6), BlockSize: 2, Medium: "CPU_PINNED",
				CacheSalt: "s", Bigram: true}}},
		},
		{
			name:    "bigram of three tokens",
			payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, arr{arr{1, 2, 3}}, 1))),
			wantErr: true,
		},
		{
			name:    "lookahead not a list of lists",
			payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, tokens(0, 1), 1, "lookahead_token_ids", arr{3}))),
			wantErr: true,
		},
		{
			name:    "legacy array root: parent 0 is no parent",
			payload: pack(vllmBatch(arr{"BlockStored", arr{uint64(9)}, uint64(0), tokens(7, 1), 1})),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{9}, TokenIDs: toks(7, 1), BlockSize: 1}}},
		},
		{
			name:    "map event keeps parent 0 (the map format marks a root with nil)",
			payload: pack(vllmBatch(storedMap(arr{uint64(9)}, uint64(0), tokens(7, 1), 1))),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{9}, HasParent: true, TokenIDs: toks(7, 1), BlockSize: 1, Medium: "GPU"}}},
		},
		{
			name:    "legacy removed with medium and group",
			payload: pack(vllmBatch(arr{"BlockRemoved", arr{uint64(1)}, "GPU", 0})),
			want:    Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockRemoved, BlockHashes: []uint64{1}, Medium: "GPU"}}},
		},
		{
			name:    "very old two-element batch, integer ts, trailing batch fields",
			payload: pack(arr{7, arr{}, nil, "future"}),
			want:    Batch{TS: 7, Events: []Event{}},
		},
		{
			name:    "block size zero with empty tokens (offload tier)",
			payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, arr{}, 0))),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{1}, TokenIDs: []uint32{}, Medium: "GPU"}}},
		},
		{
			name:    "large token ids in uint32 and int encodings",
			payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, arr{70000, u64w(5), i64(300), uint64(math.MaxUint32)}, 4))),
			want: Batch{TS: 1700000000.5, HasDPRank: true, Events: []Event{{Kind: KindBlockStored,
				BlockHashes: []uint64{1}, TokenIDs: ints(70000, 5, 300, math.MaxUint32), BlockSize: 4, Medium: "GPU"}}},
		},
	}
}

func errorCases() []decodeCase {
	good := pack(vllmBatch(storedMap(arr{uint64(11)}, nil, tokens(0, 2), 2)))
	return []decodeCase{
		{name: "empty input", payload: nil, wantErr: true},
		{name: "truncated", payload: good[:len(good)-3], wantErr: true},
		{name: "trailing bytes", payload: append(append([]byte{}, good...), 0x01), wantErr: true},
		{name: "batch is a string", payload: pack("hello"), wantErr: true},
		{name: "batch array too short", payload: pack(arr{1.0}), wantErr: true},
		{name: "ts not a number", payload: pack(arr{"x", arr{}}), wantErr: true},
		{name: "events not an array", payload: pack(arr{1.0, 5}), wantErr: true},
		{name: "map batch without events", payload: pack(obj{"ts", 1.0}), wantErr: true},
		{name: "event is an int", payload: pack(vllmBatch(5)), wantErr: true},
		{name: "event map without type", payload: pack(vllmBatch(obj{"block_hashes", arr{}})), wantErr: true},
		{name: "event array empty", payload: pack(vllmBatch(arr{})), wantErr: true},
		{name: "event tag not a string", payload: pack(vllmBatch(arr{1, 2})), wantErr: true},
		{name: "hashes not an array", payload: pack(vllmBatch(obj{"type", "BlockRemoved", "block_hashes", "x"})), wantErr: true},
		{name: "hash is a string", payload: pack(vllmBatch(obj{"type", "BlockRemoved", "block_hashes", arr{"x"}})), wantErr: true},
		{name: "token negative", payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, arr{-1}, 1))), wantErr: true},
		{name: "token too large", payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, arr{uint64(1 << 33)}, 1))), wantErr: true},
		{name: "block size negative", payload: pack(vllmBatch(storedMap(arr{uint64(1)}, nil, arr{}, -16))), wantErr: true},
		{name: "medium not a string", payload: pack(vllmBatch(obj{"type", "BlockRemoved", "block_hashes", arr{}, "medium", 3})), wantErr: true},
		{name: "negative dp rank", payload: pack(arr{1.0, arr{}, -1}), wantErr: true},
		{name: "uint64 dp rank overflow", payload: pack(arr{1.0, arr{}, u64w(math.MaxUint64)}), wantErr: true},
		{name: "huge array length prefix", payload: []byte{0x93, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xdd, 0xff, 0xff, 0xff, 0xff}, wantErr: true},
		{name: "huge string length prefix", payload: []byte{0x92, 0x01, 0x91, 0x92, 0xdb, 0x7f, 0xff, 0xff, 0xff}, wantErr: true},
		{name: "unused format byte 0xc1 in skipped value", payload: []byte{0x83, 0xa2, 't', 's', 0x01, 0xa1, 'x', 0xc1, 0xa6, 'e', 'v', 'e', 'n', 't', 's', 0x90}, wantErr: true},
		{name: "truncated ext in skipped value", payload: []byte{0x82, 0xa1, 'x', 0xc7, 0x10, 0x01}, wantErr: true},
	}
}

func TestDecodeBatch(t *testing.T) {
	for _, tc := range decodeCases() {
		t.Run(tc.name, func(t *testing.T) {
			var got Batch
			err := DecodeBatch(tc.payload, &got)
			if tc.wantErr {
				if err == nil || !errors.Is(err, ErrMalformed) {
					t.Fatalf("DecodeBatch() error = %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeBatch() error = %v", err)
			}
			assertBatch(t, &got, &tc.want)
		})
	}
}

func assertBatch(t *testing.T, got, want *Batch) {
	t.Helper()
	if got.TS != want.TS || got.DPRank != want.DPRank || got.HasDPRank != want.HasDPRank || got.Skipped != want.Skipped {
		t.Errorf("header = ts %v rank %d/%v skipped %d, want ts %v rank %d/%v skipped %d",
			got.TS, got.DPRank, got.HasDPRank, got.Skipped, want.TS, want.DPRank, want.HasDPRank, want.Skipped)
	}
	if len(got.Events) != len(want.Events) {
		t.Fatalf("got %d events, want %d: %+v", len(got.Events), len(want.Events), got.Events)
	}
	for i := range want.Events {
		if !reflect.DeepEqual(normal(got.Events[i]), normal(want.Events[i])) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got.Events[i], want.Events[i])
		}
	}
}

// normal maps empty slices to nil so expectations need not spell out capacity.
func normal(e Event) Event {
	if len(e.BlockHashes) == 0 {
		e.BlockHashes = nil
	}
	if len(e.TokenIDs) == 0 {
		e.TokenIDs = nil
	}
	if len(e.ExtraKeys) == 0 {
		e.ExtraKeys = nil
	}
	return e
}

func TestDecodeBatchReuse(t *testing.T) {
	var b Batch
	big := pack(vllmBatch(storedMap(arr{uint64(1), uint64(2)}, nil, tokens(0, 32), 16),
		obj{"type", "BlockRemoved", "block_hashes", arr{uint64(3)}}))
	small := pack(vllmBatch(obj{"type", "BlockRemoved", "block_hashes", arr{uint64(9)}}))
	if err := DecodeBatch(big, &b); err != nil {
		t.Fatal(err)
	}
	if err := DecodeBatch(small, &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 1 || b.Events[0].BlockHashes[0] != 9 || b.Events[0].TokenIDs != nil {
		t.Fatalf("reused batch = %+v, want only the small batch's event", b.Events)
	}
	if got := b.Blocks(); got != 1 {
		t.Errorf("Blocks() = %d, want 1", got)
	}
}

func TestDecodedSlicesAreCapped(t *testing.T) {
	var b Batch
	p := pack(vllmBatch(storedMap(arr{uint64(1)}, nil, tokens(0, 2), 2), storedMap(arr{uint64(2)}, nil, tokens(5, 2), 2)))
	if err := DecodeBatch(p, &b); err != nil {
		t.Fatal(err)
	}
	_ = append(b.Events[0].TokenIDs, 99) // must not overwrite event 1's tokens
	if b.Events[1].TokenIDs[0] != 5 {
		t.Fatalf("append to event 0 tokens clobbered event 1: %v", b.Events[1].TokenIDs)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindBlockStored: "BlockStored", KindBlockRemoved: "BlockRemoved",
		KindAllBlocksCleared: "AllBlocksCleared", KindUnknown: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
