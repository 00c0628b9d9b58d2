package index

import (
	"testing"
	"time"
)

// TestClearEndpointDropsEveryPrediction clears an endpoint whose predictions
// share a shard's table with another endpoint's; removing keys while scanning
// that table must neither skip nor lose any.
func TestClearEndpointDropsEveryPrediction(t *testing.T) {
	tests := []struct {
		name          string
		shards        int
		cleared, kept int // predicted blocks per endpoint
	}{
		{"one shard, many keys", 1, 700, 300},
		{"shared keys", 2, 400, 400},
		{"nothing kept", 4, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Options{Shards: tt.shards})
			if _, err := f.ix.Speculate("a", keysOf(t, 1, tt.cleared), 1, time.Minute); err != nil {
				t.Fatal(err)
			}
			if tt.kept > 0 {
				if _, err := f.ix.Speculate("b", keysOf(t, 1, tt.kept), 2, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.ix.ClearEndpoint("a"); err != nil {
				t.Fatal(err)
			}
			dropped := 0
			for _, o := range f.obs.take() {
				if o.Kind == Dropped && o.Endpoint == "a" {
					dropped += o.Blocks
				}
			}
			if dropped != tt.cleared {
				t.Errorf("%d predictions dropped, want %d", dropped, tt.cleared)
			}
			if got := f.ix.EndpointEntries("a").Speculative; got != 0 {
				t.Errorf("%d predictions left for the cleared endpoint", got)
			}
			if got := f.ix.EndpointEntries("b").Speculative; got != tt.kept {
				t.Errorf("other endpoint keeps %d predictions, want %d", got, tt.kept)
			}
		})
	}
}
