package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// removed is a one-hash BlockRemoved in vLLM's layout; a group of -1 leaves
// group_idx out, a nil medium sends nil.
func removed(h uint64, medium any, group int) obj {
	ev := obj{"type", "BlockRemoved", "block_hashes", arr{h}, "medium", medium}
	if group >= 0 {
		ev = append(ev, "group_idx", group)
	}
	return ev
}

// w sets a hash's top bit, so that msgpack writes it in the uint64 form, as
// vLLM's hashes nearly always are.
const w = uint64(1) << 63

func foldPayloads() map[string][]byte {
	stored := obj{"type", "BlockStored", "block_hashes", arr{uint64(9)}, "parent_block_hash", nil,
		"token_ids", arr{1, 2}, "block_size", 2, "lora_id", nil, "medium", "GPU"}
	return map[string][]byte{
		"vLLM step": pack(arr{1.0, arr{removed(1<<63|1, "GPU", 0), removed(2, "GPU", 0), removed(3, "GPU", 0), stored}, 0}),
		"media, groups and other events break runs": pack(arr{1.0, arr{
			removed(1, "GPU", -1), removed(2, "GPU", 0), removed(3, "GPU", 0), removed(4, "CPU", 0),
			removed(5, nil, 0), removed(6, nil, 0), removed(7, "GPU", 1), stored, removed(8, "GPU", 1),
			obj{"type", "BlockRemoved", "block_hashes", arr{10, 11}, "medium", "GPU"}, removed(12, "GPU", -1),
			obj{"type", "AllBlocksCleared"}, removed(13, "GPU", -1), obj{"type", "Unknown"}, removed(14, "GPU", -1),
		}, 0}),
		"wide hashes": pack(arr{1.0, arr{
			removed(w|1, "GPU", 0), removed(w|2, "GPU", 0), removed(w|3, "GPU", 1), removed(w|4, "CPU", 1),
			removed(w|5, "CPU", 1), removed(w|6, "CPU_PINNED", 1), removed(w|7, "CPU_PINNED", 1),
			removed(w|8, nil, -1), removed(w|9, nil, -1), removed(5, nil, -1), removed(w|10, nil, -1), stored,
		}, 0}),
		"other key order is not folded": pack(arr{1.0, arr{removed(1, "GPU", -1),
			obj{"block_hashes", arr{2}, "type", "BlockRemoved", "medium", "GPU"}, removed(3, "GPU", -1)}, 0}),
	}
}

// TestFoldRemovals: with FoldRemovals a run of one-hash removals in vLLM's
// layout on one medium and group is one event holding their hashes in
// order; anything else starts a new event.
func TestFoldRemovals(t *testing.T) {
	type got struct {
		kind   Kind
		hashes []uint64
		medium string
		group  int
		folded int
	}
	tests := map[string][]got{
		"vLLM step": {{KindBlockRemoved, []uint64{1<<63 | 1, 2, 3}, "GPU", 0, 2}, {KindBlockStored, []uint64{9}, "GPU", 0, 0}},
		"media, groups and other events break runs": {
			{KindBlockRemoved, []uint64{1, 2, 3}, "GPU", 0, 2}, // group_idx 0 and none are the same group
			{KindBlockRemoved, []uint64{4}, "CPU", 0, 0},
			{KindBlockRemoved, []uint64{5, 6}, "", 0, 1},
			{KindBlockRemoved, []uint64{7}, "GPU", 1, 0},
			{KindBlockStored, []uint64{9}, "GPU", 0, 0},
			{KindBlockRemoved, []uint64{8}, "GPU", 1, 0},
			{KindBlockRemoved, []uint64{10, 11}, "GPU", 0, 0}, // two hashes: the general decoder's
			{KindBlockRemoved, []uint64{12}, "GPU", 0, 0},
			{KindAllBlocksCleared, nil, "", 0, 0},
			{KindBlockRemoved, []uint64{13}, "GPU", 0, 0}, // an unknown event between: not folded
			{KindBlockRemoved, []uint64{14}, "GPU", 0, 0},
		},
		"wide hashes": {
			{KindBlockRemoved, []uint64{w | 1, w | 2}, "GPU", 0, 1},
			{KindBlockRemoved, []uint64{w | 3}, "GPU", 1, 0}, // only the group's byte differs
			{KindBlockRemoved, []uint64{w | 4, w | 5}, "CPU", 1, 1},
			{KindBlockRemoved, []uint64{w | 6, w | 7}, "CPU_PINNED", 1, 1},
			{KindBlockRemoved, []uint64{w | 8, w | 9, 5, w | 10}, "", 0, 3}, // a short hash in the run
			{KindBlockStored, []uint64{9}, "GPU", 0, 0},
		},
		"other key order is not folded": {
			{KindBlockRemoved, []uint64{1}, "GPU", 0, 0}, {KindBlockRemoved, []uint64{2}, "GPU", 0, 0},
			{KindBlockRemoved, []uint64{3}, "GPU", 0, 0},
		},
	}
	payloads := foldPayloads()
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			b := Batch{FoldRemovals: true}
			for round := range 2 { // the second decode reuses the arenas and keeps the option
				if err := DecodeBatch(payloads[name], &b); err != nil {
					t.Fatal(err)
				}
				var have []got
				for _, ev := range b.Events {
					have = append(have, got{ev.Kind, ev.BlockHashes, ev.Medium, ev.GroupIdx, ev.Folded})
				}
				if !reflect.DeepEqual(have, want) {
					t.Fatalf("round %d: decoded\n%v\nwant\n%v", round, have, want)
				}
			}
		})
	}
}

// unfold expands every folded event of b into the one-hash events it
// stands for, as a decode without FoldRemovals reads them.
func unfold(b *Batch) []Event {
	var out []Event
	for _, ev := range b.Events {
		if ev.Folded == 0 {
			out = append(out, ev)
			continue
		}
		for i := range ev.BlockHashes {
			out = append(out, Event{Kind: ev.Kind, BlockHashes: ev.BlockHashes[i : i+1 : i+1], Medium: ev.Medium, GroupIdx: ev.GroupIdx})
		}
	}
	return out
}

// FuzzFoldRemovals checks that decoding with FoldRemovals reads any input
// as decoding without it does, but for the folding: the same error or none,
// the same skipped count, and the same events once the folded ones are
// expanded again; and that a folded event holds one hash per event it
// stands for.
func FuzzFoldRemovals(f *testing.F) {
	for _, p := range foldPayloads() {
		f.Add(p)
	}
	for _, tc := range decodeCases() {
		f.Add(tc.payload)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		var plain Batch
		folded := Batch{FoldRemovals: true}
		perr, ferr := DecodeBatch(payload, &plain), DecodeBatch(payload, &folded)
		if (perr == nil) != (ferr == nil) {
			t.Fatalf("%x: without folding %v, with %v", payload, perr, ferr)
		}
		if perr != nil {
			if !errors.Is(ferr, ErrMalformed) && !errors.Is(ferr, ErrTooDeep) {
				t.Fatalf("error %v does not wrap ErrMalformed", ferr)
			}
			return
		}
		for _, ev := range folded.Events {
			if ev.Folded != 0 && (ev.Kind != KindBlockRemoved || len(ev.BlockHashes) != ev.Folded+1) {
				t.Fatalf("%x: folded event %+v", payload, ev)
			}
		}
		u := unfold(&folded)
		if folded.Skipped != plain.Skipped || len(u) != len(plain.Events) || (len(u) > 0 && !reflect.DeepEqual(u, plain.Events)) {
			t.Fatalf("%x: folded and expanded\n%+v\nwithout folding\n%+v", payload, u, plain.Events)
		}
	})
}

// TestSameRemoved: an event folds by comparison with the run's first one
// only when every byte but the hash's eight is the same.
func TestSameRemoved(t *testing.T) {
	event := func(h uint64, medium any, group int) []byte { return pack(removed(h, medium, group)) }
	tmpl := event(w|1, "GPU", 0)
	tests := []struct {
		name string
		p    []byte
		want bool
	}{
		{"another hash", event(w|2, "GPU", 0), true},
		{"all hash bytes differ", event(^uint64(0), "GPU", 0), true},
		{"another group", event(w|2, "GPU", 1), false},
		{"another medium", event(w|2, "CPU", 0), false},
		{"no group", event(w|2, "GPU", -1), false},
		{"a short hash", event(2, "GPU", 0), false},
		{"cut short", event(w|2, "GPU", 0)[:len(tmpl)-1], false},
		{"another key", []byte(strings.Replace(string(event(w|2, "GPU", 0)), "medium", "mediun", 1)), false},
		{"another type", []byte(strings.Replace(string(event(w|2, "GPU", 0)), "Removed", "Removes", 1)), false},
	}
	for _, tt := range tests {
		// The template first, the event after it, as in a message.
		p := append(append([]byte{}, tmpl...), tt.p...)
		if got := sameRemoved(p, len(tmpl), 0, len(tmpl)); got != tt.want {
			t.Errorf("%s: sameRemoved = %v, want %v", tt.name, got, tt.want)
		}
	}
	if sameRemoved(tmpl, -1, 0, len(tmpl)) || sameRemoved(tmpl, 0, 0, removedTailAt) {
		t.Error("sameRemoved accepted a negative offset or a template too short to hold a medium")
	}
}
