package index

import (
	"testing"
	"time"
)

func TestWithdraw(t *testing.T) {
	f := newFixture(t, Options{})
	keys := keysOf(t, 1, 6)
	// Decision 1 predicts the first four blocks on "a"; decision 2 then
	// predicts all six: it owns only the last two, and extends the others.
	if _, err := f.ix.Speculate("a", keys[:4], 1, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ix.Speculate("a", keys, 2, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ix.Speculate("b", keys, 2, time.Second); err != nil {
		t.Fatal(err)
	}
	f.obs.take()
	tests := []struct {
		name     string
		endpoint string
		decision DecisionID
		want     int
	}{
		{name: "unknown endpoint", endpoint: "zz", decision: 2, want: 0},
		{name: "a decision that owns nothing there", endpoint: "a", decision: 3, want: 0},
		{name: "only the decision's own entries", endpoint: "a", decision: 2, want: 2},
		{name: "again: nothing left", endpoint: "a", decision: 2, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.ix.Withdraw(tt.endpoint, keys, tt.decision); got != tt.want {
				t.Fatalf("Withdraw = %d, want %d", got, tt.want)
			}
		})
	}
	if m := f.ix.Lookup(keys, []string{"a", "b"}, nil); m[0].Speculative != 4 || m[1].Speculative != 6 {
		t.Fatalf("after withdrawing decision 2 on a: %+v, want a 4 (decision 1's), b 6", m)
	}
	outs := f.obs.take()
	if len(outs) != 1 || outs[0].Kind != StaleExpiry || outs[0].Decision != 2 || outs[0].Blocks != 2 || outs[0].Endpoint != "a" {
		t.Fatalf("outcomes %+v, want one StaleExpiry of 2 blocks for decision 2 on a", outs)
	}
	if st := f.ix.Stats(); st.Withdrawn != 2 || st.Outcomes[StaleExpiry] != 2 {
		t.Fatalf("stats withdrawn %d, stale %d; want 2 and 2", st.Withdrawn, st.Outcomes[StaleExpiry])
	}
}
