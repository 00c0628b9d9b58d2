package relay

import "testing"

func TestSeqTracker(t *testing.T) {
	type step struct {
		seq    uint64
		want   verdict
		accept bool
	}
	tests := []struct {
		name     string
		replayed [2]uint64 // applied before the steps when non-zero
		steps    []step
	}{
		{"first seen is next", [2]uint64{}, []step{{7, verdictNext, true}, {8, verdictNext, true}}},
		{"gap", [2]uint64{}, []step{{0, verdictNext, true}, {3, verdictGap, false}}},
		{"restart to zero", [2]uint64{}, []step{{0, verdictNext, true}, {1, verdictNext, true}, {0, verdictBackwards, false}}},
		{"repeat of last is backwards", [2]uint64{}, []step{{5, verdictNext, true}, {5, verdictBackwards, false}}},
		{"live after replay are duplicates", [2]uint64{2, 6}, []step{{2, verdictDuplicate, false}, {6, verdictDuplicate, false},
			{7, verdictNext, true}, {3, verdictBackwards, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tr seqTracker
			if tc.replayed != [2]uint64{} {
				tr.accept(tc.replayed[0] - 1)
				tr.accept(tc.replayed[1])
				tr.markReplayed(tc.replayed[0], tc.replayed[1])
			}
			for i, s := range tc.steps {
				if got := tr.classify(s.seq); got != s.want {
					t.Fatalf("step %d: classify(%d) = %d, want %d", i, s.seq, got, s.want)
				}
				if s.accept {
					tr.accept(s.seq)
				}
			}
		})
	}
}

// After an empty replay buffer the stream must start at seq 0: a later
// first batch is a gap to fill, not a start.
func TestSeqTrackerExpectFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  uint64
		want verdict
	}{{"seq 0 is next", 0, verdictNext}, {"later seq is a gap", 3, verdictGap}} {
		t.Run(tc.name, func(t *testing.T) {
			var tr seqTracker
			tr.accept(41)
			tr.expectFirst()
			if got := tr.classify(tc.seq); got != tc.want || tr.next() != 0 {
				t.Fatalf("classify(%d) = %d, next %d; want %d, next 0", tc.seq, got, tr.next(), tc.want)
			}
		})
	}
}

// A live batch in the duplicate window is a duplicate only with the replayed
// batch's bytes; other bytes mean the engine restarted meanwhile.
func TestSeqTrackerClassifyLive(t *testing.T) {
	tests := []struct {
		name string
		seq  uint64
		sum  uint64
		want verdict
	}{
		{"same bytes", 3, 103, verdictDuplicate},
		{"other bytes", 3, 999, verdictBackwards},
		{"no fingerprint kept", 4, 999, verdictDuplicate},
		{"past the window", 6, 999, verdictNext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tr seqTracker
			for seq := uint64(2); seq <= 5; seq++ {
				tr.accept(seq)
				if seq != 4 {
					tr.noteReplayed(seq, 100+seq)
				}
			}
			tr.markReplayed(2, 5)
			if got := tr.classifyLive(tc.seq, tc.sum); got != tc.want {
				t.Fatalf("classifyLive(%d, %d) = %d, want %d", tc.seq, tc.sum, got, tc.want)
			}
		})
	}
	var tr seqTracker
	tr.accept(1)
	tr.noteReplayed(1, 7)
	tr.markReplayed(1, 1)
	tr.accept(2)
	if tr.replayedSums != nil {
		t.Fatal("fingerprints kept after the window closed")
	}
}
