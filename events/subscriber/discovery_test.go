package subscriber_test

import (
	"slices"
	"testing"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/index"
)

// endpointSet is an in-memory EndpointSet that logs its changes.
type endpointSet struct{ log []string }

func (s *endpointSet) AddEndpoint(model, ep string) bool {
	s.log = append(s.log, "add "+model+" "+ep)
	return true
}

func (s *endpointSet) RemoveEndpoint(model, ep string) bool {
	s.log = append(s.log, "remove "+model+" "+ep)
	return true
}

func TestDiscovery(t *testing.T) {
	r0 := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint}
	r1 := subscriber.Source{Model: testModel, Endpoint: sinkEndpoint, DPRank: 1}
	other := subscriber.Source{Model: "other", Endpoint: sinkEndpoint}
	up := func(src subscriber.Source) func(d *subscriber.Discovery) {
		return func(d *subscriber.Discovery) { d.SourceUp(src, api.Heartbeat{}) }
	}
	down := func(src subscriber.Source) func(d *subscriber.Discovery) {
		return func(d *subscriber.Discovery) { d.SourceDown(src, "expired") }
	}
	tests := []struct {
		name        string
		ops         []func(d *subscriber.Discovery)
		wantLog     []string
		wantCleared bool
	}{
		{"first rank adds", []func(*subscriber.Discovery){up(r0)}, []string{"add " + testModel + " " + sinkEndpoint}, false},
		{"second rank adds nothing", []func(*subscriber.Discovery){up(r0), up(r1)},
			[]string{"add " + testModel + " " + sinkEndpoint}, false},
		{"one rank of two leaving keeps it", []func(*subscriber.Discovery){up(r0), up(r1), down(r0)},
			[]string{"add " + testModel + " " + sinkEndpoint}, false},
		{"last rank leaving removes and clears", []func(*subscriber.Discovery){up(r0), up(r1), down(r0), down(r1)},
			[]string{"add " + testModel + " " + sinkEndpoint, "remove " + testModel + " " + sinkEndpoint}, true},
		{"another model keeps the index", []func(*subscriber.Discovery){up(r0), up(other), down(r0)},
			[]string{"add " + testModel + " " + sinkEndpoint, "add other " + sinkEndpoint,
				"remove " + testModel + " " + sinkEndpoint}, false},
		{"down without up is ignored", []func(*subscriber.Discovery){down(r0)}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := index.New(index.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sink := subscriber.NewIndexSink(ix, nil)
			sink.ApplyBatch(r0, batchOf(stored16(1, 0, false, 0, 1)))
			if _, err := ix.Speculate(sinkEndpoint, []index.Key{1}, 1, 1e9); err != nil {
				t.Fatal(err)
			}
			set := &endpointSet{}
			d := subscriber.NewDiscovery(set, sink, nil)
			for _, op := range tc.ops {
				op(d)
			}
			if !slices.Equal(set.log, tc.wantLog) {
				t.Fatalf("changes = %q, want %q", set.log, tc.wantLog)
			}
			st := ix.Stats()
			if cleared := st.Entries == 0 && st.Speculative == 0; cleared != tc.wantCleared {
				t.Fatalf("index cleared = %v (stats %+v), want %v", cleared, st, tc.wantCleared)
			}
		})
	}
}
