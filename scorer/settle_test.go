package scorer

import (
	"context"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testclock"
)

// Commit leaves the expiry its inserts would do to Settle: predictions an
// earlier decision made, due by now, are still in the index after the next
// decision's Commit and end (stale) at its Settle, or at its Release when
// the caller never settles, exactly as an inline expiry would end them.
func TestSettleExpiresWhatCommitLeft(t *testing.T) {
	for _, settle := range []bool{true, false} {
		name := map[bool]string{true: "Settle", false: "Release"}[settle]
		t.Run(name, func(t *testing.T) {
			clock := testclock.New(time.Unix(1_700_000_000, 0))
			eps := benchEndpoints(8)
			ix := benchIndexWith(t, eps, 64*benchSeqBlocks, index.Options{Now: clock.Now, Shards: 4})
			s := New(NewPools([]PoolConfig{{Name: "m", Endpoints: eps}}, ""), &Load{}, Options{
				Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, TTL: StaticTTL{D: time.Second}})
			decide := func(i int) *Decision {
				d, err := s.Pick(context.Background(), completion(newPrompt(nil, i, 64*benchSeqBlocks)))
				if err != nil {
					t.Fatal(err)
				}
				d.Commit()
				return d
			}
			d := decide(0)
			d.Settle()
			d.Release()
			d.Done()
			if st := ix.Stats(); st.Speculative != benchSeqBlocks {
				t.Fatalf("%d predictions after the first decision, want %d", st.Speculative, benchSeqBlocks)
			}
			clock.Advance(2 * time.Second) // the first decision's predictions are due
			d = decide(1)
			if st := ix.Stats(); st.Speculative != 2*benchSeqBlocks || st.Outcomes[index.StaleExpiry] != 0 {
				t.Fatalf("after the second Commit: %d predictions, %d stale; want %d and 0 (expiry deferred)",
					st.Speculative, st.Outcomes[index.StaleExpiry], 2*benchSeqBlocks)
			}
			if settle {
				d.Settle()
				d.Settle() // a no-op
			}
			d.Release()
			if st := ix.Stats(); st.Speculative != benchSeqBlocks || st.Outcomes[index.StaleExpiry] != benchSeqBlocks {
				t.Fatalf("after %s: %d predictions, %d stale; want %d and %d",
					name, st.Speculative, st.Outcomes[index.StaleExpiry], benchSeqBlocks, benchSeqBlocks)
			}
			d.Done()
		})
	}
}
