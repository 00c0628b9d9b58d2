package sim

import (
	"slices"
	"testing"

	"github.com/warmroute/warmroute/events/wire"
)

func sampleEvents() []kvEvent {
	return []kvEvent{
		{kind: blockRemoved, hashes: []uint64{1 << 63}},
		{kind: blockStored, hashes: []uint64{7, 1<<64 - 1}, parent: 99, hasParent: true,
			tokens: seqTokens(70000, 8), blockSize: 4, loraID: 2, loraName: "adapter"},
		{kind: blockStored, hashes: []uint64{5}, tokens: seqTokens(0, 4), blockSize: 4},
		{kind: allBlocksCleared},
	}
}

func TestEncodeBatchDecodes(t *testing.T) {
	for _, format := range []EventFormat{FormatMap, FormatArray} {
		t.Run(string(format), func(t *testing.T) {
			payload := encodeBatch(nil, 1700000000.25, sampleEvents(), 3, format)
			var b wire.Batch
			if err := wire.DecodeBatch(payload, &b); err != nil {
				t.Fatalf("DecodeBatch: %v", err)
			}
			if b.TS != 1700000000.25 || !b.HasDPRank || b.DPRank != 3 || b.Skipped != 0 || len(b.Events) != 4 {
				t.Fatalf("batch = ts %v dp %v/%v skipped %d events %d", b.TS, b.HasDPRank, b.DPRank, b.Skipped, len(b.Events))
			}
			for i, want := range sampleEvents() {
				checkEvent(t, b.Events[i], want)
			}
		})
	}
}

func checkEvent(t *testing.T, got wire.Event, want kvEvent) {
	t.Helper()
	kinds := map[eventKind]wire.Kind{blockStored: wire.KindBlockStored, blockRemoved: wire.KindBlockRemoved,
		allBlocksCleared: wire.KindAllBlocksCleared}
	toks := make([]uint32, len(want.tokens))
	for i, v := range want.tokens {
		toks[i] = uint32(v)
	}
	switch {
	case got.Kind != kinds[want.kind]:
		t.Fatalf("kind %v, want %v", got.Kind, kinds[want.kind])
	case !slices.Equal(got.BlockHashes, want.hashes):
		t.Fatalf("hashes %v, want %v", got.BlockHashes, want.hashes)
	case got.HasParent != want.hasParent || got.ParentHash != want.parent:
		t.Fatalf("parent %v/%v, want %v/%v", got.HasParent, got.ParentHash, want.hasParent, want.parent)
	case !slices.Equal(got.TokenIDs, toks):
		t.Fatalf("tokens %v, want %v", got.TokenIDs, toks)
	case got.BlockSize != want.blockSize || got.LoRAName != want.loraName || got.LoRAID != int64(want.loraID):
		t.Fatalf("block size %d lora %q/%d, want %d %q/%d", got.BlockSize, got.LoRAName, got.LoRAID,
			want.blockSize, want.loraName, want.loraID)
	case want.kind != allBlocksCleared && got.Medium != mediumGPU:
		t.Fatalf("medium %q", got.Medium)
	}
}

func TestEventFormatFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    EventFormat
		wantErr bool
	}{
		{"map", FormatMap, false},
		{"ARRAY", FormatArray, false},
		{"", FormatMap, false},
		{"tuple", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var f EventFormat
			err := f.Set(tt.in)
			if (err != nil) != tt.wantErr || (!tt.wantErr && f != tt.want) {
				t.Fatalf("Set(%q) = %v, %q", tt.in, err, f)
			}
		})
	}
}

func FuzzEventFormatSet(f *testing.F) {
	for _, s := range []string{"map", "ARRAY", "", "tuple"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var ef EventFormat
		if ef.Set(s) == nil && ef != FormatMap && ef != FormatArray {
			t.Fatalf("Set(%q) accepted %q", s, ef)
		}
	})
}

// TestMsgpackWidths covers every integer, string and header width, since a
// wrong width byte breaks every decoder at once.
func TestMsgpackWidths(t *testing.T) {
	long := make([]kvEvent, 17)
	for i := range long {
		long[i] = kvEvent{kind: blockStored, hashes: []uint64{0, 200, 70000, 1 << 40}, tokens: seqTokens(65530, 20),
			blockSize: 5, loraName: string(make([]byte, 300))}
	}
	payload := encodeBatch(nil, 1, long, 0, FormatMap)
	var b wire.Batch
	if err := wire.DecodeBatch(payload, &b); err != nil || len(b.Events) != 17 {
		t.Fatalf("DecodeBatch = %v, %d events", err, len(b.Events))
	}
	if b.Events[16].BlockHashes[3] != 1<<40 || b.Events[16].TokenIDs[19] != 65549 || len(b.Events[16].LoRAName) != 300 {
		t.Fatalf("event = %+v", b.Events[16])
	}
}
