package scorer

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

// sinkRecorder is an in-memory PredictionSink.
type sinkRecorder struct {
	mu  sync.Mutex
	got []index.Prediction
}

func (r *sinkRecorder) Predicted(p index.Prediction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
}

func TestCommitSharesPrediction(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name      string
		ttl       time.Duration
		confirmed int // leading blocks already stored on the chosen endpoint
		wantKeys  int // shared keys; 0 means nothing is shared
	}{
		{name: "missing blocks are shared", ttl: 3 * time.Second, confirmed: 4, wantKeys: 6},
		{name: "nothing cached yet", ttl: time.Second, confirmed: 0, wantKeys: 10},
		{name: "fully confirmed shares nothing", ttl: time.Second, confirmed: 10, wantKeys: 0},
		{name: "paused speculation shares nothing", ttl: 0, confirmed: 4, wantKeys: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := index.New(index.Options{BlockSize: bs, Now: func() time.Time { return at }})
			if err != nil {
				t.Fatal(err)
			}
			sink := &sinkRecorder{}
			p := &pipe{ix: ix, load: &Load{}, pol: &policy{ttl: tt.ttl, trust: 1}}
			p.s = New(NewPools(pipePools, ""), p.load, Options{
				Index: ix, Tokens: map[string]Tokens{"m": idTokens{}}, TTL: p.pol, Predictions: sink,
			})
			ids := prompt(5, 10*bs)
			if tt.confirmed > 0 {
				p.store(t, "10.0.0.2:8000", ids[:tt.confirmed*bs], index.Identity{Model: "m"})
			}
			d := p.pick(t, completion(ids))
			d.Commit()
			d.Commit() // a second commit shares nothing more
			if tt.wantKeys == 0 {
				if len(sink.got) != 0 {
					t.Fatalf("shared %+v, want nothing", sink.got)
				}
				return
			}
			if len(sink.got) != 1 {
				t.Fatalf("shared %d predictions, want 1", len(sink.got))
			}
			keys, _ := index.AppendKeys(nil, index.Identity{Model: "m"}, bs, tokensOf(ids))
			want := index.Prediction{Endpoint: d.Endpoint, Model: "m", Decision: d.ID, DecidedAt: at, ExpiresAt: at.Add(tt.ttl)}
			got := sink.got[0]
			if !slices.Equal(got.Keys, keys[10-tt.wantKeys:]) {
				t.Errorf("shared keys %v, want the last %d of %v", got.Keys, tt.wantKeys, keys)
			}
			if got.Endpoint != want.Endpoint || got.Model != want.Model || got.Decision != want.Decision ||
				!got.DecidedAt.Equal(want.DecidedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
				t.Errorf("shared %+v, want %+v", got, want)
			}
		})
	}
}

func tokensOf(ids []int) []uint32 {
	out := make([]uint32, len(ids))
	for i, v := range ids {
		out[i] = uint32(v)
	}
	return out
}

// Replicas seed the high half of their decision ids at random, so two
// replicas' ids differ there (a collision has probability 2^-32).
func TestDecisionIDsDifferAcrossScorers(t *testing.T) {
	pools := NewPools([]PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}, "")
	a, b := New(pools, &Load{}, Options{}), New(pools, &Load{}, Options{})
	da, _ := a.Pick(t.Context(), &Request{Model: "m"})
	db, _ := b.Pick(t.Context(), &Request{Model: "m"})
	if da.ID>>32 == db.ID>>32 {
		t.Errorf("decision ids %x and %x share their high 32 bits", da.ID, db.ID)
	}
}
