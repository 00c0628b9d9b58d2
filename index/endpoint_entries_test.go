package index_test

import (
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

func TestEndpointEntries(t *testing.T) {
	id := index.Identity{Model: "m"}
	toks := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	keys, err := index.AppendKeys(nil, id, 4, toks)
	if err != nil {
		t.Fatal(err)
	}
	store := func(ix *index.Index, ep string, rank int) {
		t.Helper()
		_, err := ix.Store(index.Stored{Endpoint: ep, Rank: rank, Hashes: []uint64{1, 2, 3},
			Tokens: toks, BlockSize: 4, Identity: id})
		if err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		setup    func(ix *index.Index, now *time.Time)
		endpoint string
		want     index.EndpointEntries
	}{
		{name: "unknown endpoint", setup: func(*index.Index, *time.Time) {}, endpoint: "a:1"},
		{name: "confirmed", endpoint: "a:1", want: index.EndpointEntries{Confirmed: 3},
			setup: func(ix *index.Index, _ *time.Time) { store(ix, "a:1", 0) }},
		{name: "two ranks count once", endpoint: "a:1", want: index.EndpointEntries{Confirmed: 3},
			setup: func(ix *index.Index, _ *time.Time) { store(ix, "a:1", 0); store(ix, "a:1", 1) }},
		{name: "other endpoint not counted", endpoint: "a:1",
			setup: func(ix *index.Index, _ *time.Time) { store(ix, "b:1", 0) }},
		{name: "live prediction", endpoint: "a:1", want: index.EndpointEntries{Speculative: 2},
			setup: func(ix *index.Index, _ *time.Time) { ix.Speculate("a:1", keys[:2], 1, time.Second) }},
		{name: "expired prediction", endpoint: "a:1",
			setup: func(ix *index.Index, now *time.Time) {
				ix.Speculate("a:1", keys, 1, time.Second)
				*now = now.Add(2 * time.Second)
			}},
		{name: "confirmed prediction", endpoint: "a:1", want: index.EndpointEntries{Confirmed: 3},
			setup: func(ix *index.Index, _ *time.Time) { ix.Speculate("a:1", keys, 1, time.Second); store(ix, "a:1", 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			ix, err := index.New(index.Options{BlockSize: 4, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			tt.setup(ix, &now)
			if got := ix.EndpointEntries(tt.endpoint); got != tt.want {
				t.Fatalf("EndpointEntries(%q) = %+v, want %+v", tt.endpoint, got, tt.want)
			}
		})
	}
}
