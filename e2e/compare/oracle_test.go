package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/warmroute/warmroute/sim"
)

// chainOf makes a cache state holding tokens as one chain of full blocks
// (a trailing partial block is not cached, as in the engine).
func chainOf(blockSize int, tokens []int, firstHash uint64) []sim.CacheBlock {
	var out []sim.CacheBlock
	var parent *uint64
	for i := 0; i+blockSize <= len(tokens); i += blockSize {
		h := firstHash + uint64(i)
		out = append(out, sim.CacheBlock{Hash: h, ParentHash: parent, TokenIDs: tokens[i : i+blockSize], BlockSize: blockSize})
		parent = &h
	}
	return out
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 100
	}
	return out
}

func TestCacheChainCachedTokens(t *testing.T) {
	tokens := seq(40) // two full blocks of 16 and 8 more
	other := append(seq(16), 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7)
	lora := chainOf(16, tokens, 1)
	for i := range lora {
		lora[i].LoRAName = "adapter"
	}
	tests := []struct {
		name   string
		blocks []sim.CacheBlock
		prompt []int
		want   int
	}{
		{name: "empty cache", prompt: tokens, want: 0},
		{name: "whole chain", blocks: chainOf(16, tokens, 1), prompt: tokens, want: 32},
		{name: "first block only", blocks: chainOf(16, tokens[:16], 1), prompt: tokens, want: 16},
		{name: "diverges after one block", blocks: chainOf(16, other, 1), prompt: tokens, want: 16},
		{name: "capped below prompt length", blocks: chainOf(16, tokens, 1), prompt: tokens[:32], want: 16},
		{name: "prompt shorter than a block", blocks: chainOf(16, tokens, 1), prompt: tokens[:5], want: 0},
		{name: "empty prompt", blocks: chainOf(16, tokens, 1), prompt: nil, want: 0},
		{name: "lora blocks ignored", blocks: lora, prompt: tokens, want: 0},
		{name: "second block without its parent", blocks: chainOf(16, tokens, 1)[1:], prompt: tokens, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCacheChain(sim.CacheState{BlockSize: 16, Blocks: tt.blocks})
			if got := c.cachedTokens(tt.prompt); got != tt.want {
				t.Errorf("cachedTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCacheChainZeroBlockSize(t *testing.T) {
	if got := newCacheChain(sim.CacheState{}).cachedTokens(seq(40)); got != 0 {
		t.Errorf("cachedTokens with block size 0 = %d, want 0", got)
	}
}

// fakeSims serves /tokenize and /debug/cache like simulators whose caches
// hold the given chains.
func fakeSims(t *testing.T, caches ...[]sim.CacheBlock) []string {
	t.Helper()
	var addrs []string
	for _, blocks := range caches {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/tokenize":
				json.NewEncoder(w).Encode(map[string]any{"tokens": seq(40)})
			case "/debug/cache":
				json.NewEncoder(w).Encode(sim.CacheState{BlockSize: 16, Blocks: blocks})
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		addrs = append(addrs, srv.Listener.Addr().String())
	}
	return addrs
}

func TestOraclePick(t *testing.T) {
	tokens := seq(40)
	tests := []struct {
		name   string
		caches [][]sim.CacheBlock
		busy   []int // requests already in flight per sim
		want   int
	}{
		{name: "longest prefix wins", caches: [][]sim.CacheBlock{chainOf(16, tokens[:16], 1), chainOf(16, tokens, 50), nil}, want: 1},
		{name: "longest prefix wins over load", caches: [][]sim.CacheBlock{nil, chainOf(16, tokens, 50), nil}, busy: []int{0, 5, 0}, want: 1},
		{name: "tie goes to the least loaded", caches: [][]sim.CacheBlock{nil, nil, nil}, busy: []int{2, 1, 0}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOracle(http.DefaultClient, fakeSims(t, tt.caches...))
			copy(o.flight, tt.busy)
			got, err := o.pick(context.Background(), "a prompt")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("pick = %d, want %d", got, tt.want)
			}
			before := o.flight[got]
			o.done(got)
			if o.flight[got] != before-1 {
				t.Error("done did not release the pick")
			}
		})
	}
}

func TestOraclePickFailsOnBadSim(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer srv.Close()
	o := newOracle(http.DefaultClient, []string{srv.Listener.Addr().String()})
	if _, err := o.pick(context.Background(), "p"); err == nil {
		t.Fatal("pick succeeded against a failing simulator")
	}
}

func BenchmarkCachedTokens(b *testing.B) {
	for _, n := range []int{256, 2048, 16384} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			tokens := seq(n)
			c := newCacheChain(sim.CacheState{BlockSize: 16, Blocks: chainOf(16, tokens, 1)})
			b.ReportAllocs()
			for b.Loop() {
				c.cachedTokens(tokens)
			}
		})
	}
}
